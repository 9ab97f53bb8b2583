#include "settings.h"

#include <array>
#include <cctype>
#include <cstdlib>
#include <cstring>

namespace mpix::settings {

namespace checks {
bool any_text(const std::string &value) { return !value.empty(); }

// Names as libfabric spells them (sockets, cxi, verbs;ofi_rxm), separated by commas with optional
// blanks around them; at least one.
bool provider_list(const std::string &value) {
  bool any = false;
  size_t start = 0;
  while (start <= value.size()) {
    size_t end = value.find(',', start);
    if (end == std::string::npos) end = value.size();
    std::string item = value.substr(start, end - start);
    const size_t first = item.find_first_not_of(" \t"), last = item.find_last_not_of(" \t");
    if (first == std::string::npos) return false;  // an empty item: a stray comma
    item = item.substr(first, last - first + 1);
    for (char c : item)
      if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-' || c == ';' || c == '.')) return false;
    any = true;
    start = end + 1;
  }
  return any;
}

// auto, gpu, first, block, round-robin (topo/nic_choice.cpp), or a domain name: the provider
// decides which names exist (a name it lacks is refused when the NIC is chosen, naming those it
// has), so anything printable without blanks or commas.
bool nic_choice(const std::string &value) {
  if (value.empty()) return false;
  for (char c : value)
    if (!std::isgraph(static_cast<unsigned char>(c)) || c == ',') return false;
  return true;
}
}  // namespace checks

namespace {

constexpr const char *kTrue[] = {"1", "true", "yes", "on"};
constexpr const char *kFalse[] = {"0", "false", "no", "off"};

// The words of a choice, in order.
std::vector<std::string> words_of(const Entry &e) {
  std::vector<std::string> out;
  const std::string all = e.values;
  size_t start = 0;
  while (start <= all.size()) {
    size_t end = all.find('|', start);
    if (end == std::string::npos) end = all.size();
    out.push_back(all.substr(start, end - start));
    start = end + 1;
  }
  return out;
}

// A boolean word: 1 or 0; -1 where `text` is none.
int boolean(const std::string &text) {
  for (const char *w : kTrue)
    if (text == w) return 1;
  for (const char *w : kFalse)
    if (text == w) return 0;
  return -1;
}

// Decimal digits only (no sign, blank or suffix), within 64 bits.
bool unsigned_decimal(const std::string &text, uint64_t *out) {
  if (text.empty() || text.size() > 20) return false;
  uint64_t v = 0;
  for (char c : text) {
    if (c < '0' || c > '9') return false;
    const uint64_t d = static_cast<uint64_t>(c - '0');
    if (v > (UINT64_MAX - d) / 10) return false;
    v = v * 10 + d;
  }
  *out = v;
  return true;
}

struct Snapshot {
  std::array<Value, kCount> values;
  std::array<std::string, kCount> problems;  // per entry: why its value was refused ("" if not)
  std::string joined;
};

const Snapshot &snapshot() {
  static const Snapshot s = [] {
    Snapshot s;
    for (size_t i = 0; i < kCount; ++i) {
      if (kTable[i].when != When::start) {
        s.values[i] = fallback(kTable[i]);
        continue;
      }
      std::string why;
      if (!read(static_cast<Id>(i), &s.values[i], &why)) {
        s.problems[i] = why;
        s.joined += (s.joined.empty() ? "" : "; ") + why;
      }
    }
    return s;
  }();
  return s;
}

}  // namespace

const Entry *find(const std::string &name) {
  for (const Entry &e : kTable)
    if (name == e.name) return &e;
  return nullptr;
}

std::string accepted(const Entry &e) {
  switch (e.kind) {
    case Kind::flag: return "a boolean: 1, true, yes, on, 0, false, no or off";
    case Kind::autoflag: return "auto or a boolean: 1, true, yes, on, 0, false, no or off";
    case Kind::count:
    case Kind::size:
    case Kind::duration:
      return "an integer in [" + std::to_string(e.min) + ", " + std::to_string(e.max) + "]" +
             (*e.unit ? std::string(" (") + e.unit + ")" : std::string());
    case Kind::choice: {
      std::string out = "one of ";
      const std::vector<std::string> words = words_of(e);
      for (size_t i = 0; i < words.size(); ++i) out += (i ? ", " : "") + words[i];
      return out;
    }
    case Kind::text: return e.values;
  }
  return "";
}

bool parse(const Entry &e, const std::string &text, Value *out, std::string *why) {
  Value v;
  v.set = true;
  v.text = text;
  bool ok = false;
  switch (e.kind) {
    case Kind::flag:
    case Kind::autoflag: {
      const int b = boolean(text);
      if (b >= 0) {
        v.number = static_cast<uint64_t>(b);
        ok = true;
      } else if (e.kind == Kind::autoflag && text == "auto") {
        v.number = kAuto;
        ok = true;
      }
      break;
    }
    case Kind::count:
    case Kind::size:
    case Kind::duration:
      ok = unsigned_decimal(text, &v.number) && v.number >= e.min && v.number <= e.max;
      break;
    case Kind::choice: {
      const std::vector<std::string> words = words_of(e);
      for (size_t i = 0; i < words.size() && !ok; ++i)
        if (text == words[i]) v.number = i, ok = true;
      break;
    }
    case Kind::text: ok = !text.empty() && (!e.check || e.check(text)); break;
  }
  if (!ok) {
    if (why) *why = std::string(e.name) + "=" + text + ": expected " + accepted(e);
    return false;
  }
  *out = std::move(v);
  return true;
}

Value fallback(const Entry &e) {
  Value v;
  if (e.fallback[0] != '(' && e.fallback[0] != '\0') parse(e, e.fallback, &v, nullptr);
  v.set = false;
  return v;
}

bool read(Id id, Value *out, std::string *why) {
  const Entry &e = entry(id);
  *out = fallback(e);
  const char *v = std::getenv(e.name);  // with given(), the only reads of MPIX_ST_* variables
  if (!v || !*v) return true;
  Value parsed;
  if (!parse(e, v, &parsed, why)) return false;
  *out = std::move(parsed);
  return true;
}

std::string given(Id id) {
  const char *v = std::getenv(entry(id).name);
  return v ? v : "";
}

const Value &get(Id id) {
  const size_t i = static_cast<size_t>(id);
  if (kTable[i].when == When::start) return snapshot().values[i];
  // A call setting asked for outside a call: read now (one value per thread, until its next get).
  thread_local std::array<Value, kCount> now;
  if (!read(id, &now[i], nullptr)) now[i] = fallback(kTable[i]);
  return now[i];
}

std::vector<std::string> problems() {
  std::vector<std::string> out;
  const Snapshot &s = snapshot();
  for (size_t i = 0; i < kCount; ++i) {
    if (kTable[i].when == When::start) {
      if (!s.problems[i].empty()) out.push_back(s.problems[i]);
      continue;
    }
    Value v;
    std::string why;
    if (!read(static_cast<Id>(i), &v, &why)) out.push_back(why);
  }
  return out;
}

const std::string &start_problems() { return snapshot().joined; }

}  // namespace mpix::settings
