// The library's settings: every MPIX_ST_* environment variable it reads, in one table
// (settings.def: name, kind, default, range or accepted values, when it is read, one line of
// help), parsed by one parser. The bottom layer: it includes nothing of the project's other layers,
// and every layer may include it. No code outside this layer calls getenv for an MPIX_ST_*
// variable (tests/settings/check_settings.py checks that).
//
// How settings are read:
//   - `start` settings are read once, together, the first time any of them is asked for (at
//     MPI_Init at the latest; thread-safe): get(), flag(), number(), word(), text(), is_set().
//     Setting the variable later changes nothing.
//   - `call` settings are read at each call that uses them (read()), so a program may change
//     them between calls; a value the table refuses fails that call with MPI_ERR_ARG.
//   - Unset or empty: the entry's default.
// Validation: the interposed MPI_Init and MPI_Init_thread check every entry (problems()) right
// after PMPI_Init and raise one MPI_ERR_ARG error through MPI_COMM_WORLD's error handler naming
// each refused variable, its value and what it accepts; the library then refuses all work (the
// backend's selection error, reported by every window, epoch and collective call). A start
// setting the table refuses reads as its default for code that asks anyway, which runs only
// where that refusal is reported. doc/guide/environment.md is generated from the table
// (scripts/settings-doc.py).
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace mpix::settings {

enum class Area : uint8_t { core, internode, throttle, collectives, datatypes, p2p, backends };
// settings.def's header says what each kind accepts.
enum class Kind : uint8_t { flag, autoflag, count, size, duration, choice, text };
enum class When : uint8_t { start, call };

// Validators of text settings (named in the table's `check` column): true when `value` (non-empty)
// is acceptable.
using Check = bool (*)(const std::string &value);
namespace checks {
inline constexpr Check none = nullptr;
bool any_text(const std::string &value);       // anything non-empty
bool provider_list(const std::string &value);  // provider names separated by commas
bool nic_choice(const std::string &value);     // a policy word or a domain name (no spaces or commas)
}  // namespace checks

struct Entry {
  const char *name;
  Area area;
  Kind kind;
  const char *fallback;  // the default as text; "(...)": chosen where the setting is used
  uint64_t min, max;     // numeric kinds
  const char *unit;      // numeric kinds: what the number counts
  const char *values;    // choice: the words, separated by '|'; text: what it accepts, in words
  Check check;           // text: the validator
  When when;
  const char *help;
};

enum class Id : uint16_t {
#define MPIX_ST_SETTING(name, ...) name,
#include "settings.def"
#undef MPIX_ST_SETTING
};

inline constexpr Entry kTable[] = {
#define MPIX_ST_SETTING(name, area, kind, fallback, lo, hi, unit, values, check, when, help) \
  {#name, Area::area, Kind::kind, fallback, lo##ull, hi##ull, unit, values, checks::check, When::when, help},
#include "settings.def"
#undef MPIX_ST_SETTING
};
inline constexpr size_t kCount = sizeof kTable / sizeof kTable[0];

constexpr const Entry &entry(Id id) { return kTable[static_cast<size_t>(id)]; }
// The entry named `name` (the full MPIX_ST_* name), or null.
const Entry *find(const std::string &name);

struct Value {
  bool set = false;     // the variable gave a valid value; false: the default applies
  uint64_t number = 0;  // count, size, duration: the number; flag: 0 or 1; autoflag: 0 or 1 (auto: 2);
                        // choice: the word's index in `values`
  std::string text;     // choice: the word; text: the string; others: the text given ("" when unset)
};
inline constexpr uint64_t kAuto = 2;  // an autoflag's number for auto

// Parses `text` as `e`'s value. False with *why = "NAME=text: expected ..." (naming what the entry
// accepts) when the table refuses it; an empty text is refused (read() takes an empty variable as
// unset).
bool parse(const Entry &e, const std::string &text, Value *out, std::string *why);
// The default of `e` (set = false): its fallback parsed, or nothing for a "(...)" default.
Value fallback(const Entry &e);
// What `e` accepts, in words: "an integer in [4, 1048576] (KiB)", "one of auto, host, cuda, hip".
std::string accepted(const Entry &e);

// Reads `id`'s variable now: its value, or the default where it is unset or empty. False with *why
// (as parse) when the table refuses it; *out is then the default.
bool read(Id id, Value *out, std::string *why);

// The variable's text as the environment gives it now ("" where unset): for messages about a value
// the table refused.
std::string given(Id id);

// The start-up snapshot (see above). For start settings; asking for a call setting reads it now
// and returns its default where it is refused.
const Value &get(Id id);
inline bool flag(Id id) { return get(id).number != 0; }
inline uint64_t number(Id id) { return get(id).number; }
inline const std::string &word(Id id) { return get(id).text; }  // choice
inline const std::string &text(Id id) { return get(id).text; }  // text
inline bool is_set(Id id) { return get(id).set; }

// One message ("NAME=value: expected ...") per setting the table refuses: start settings as the
// snapshot read them, call settings as they read now. Empty: every setting is acceptable.
std::vector<std::string> problems();
// The snapshot's refusals (start settings only) joined with "; ": what makes the library refuse
// work after MPI_Init reported them. "" when none.
const std::string &start_problems();

}  // namespace mpix::settings
