// The process's inter-node transport: one fabric endpoint, its doorbell agent, and the budget of
// triggered operations. Opened collectively over MPI_COMM_WORLD inside MPI_Init when some peers
// are on other (virtual) nodes, because the fabric's address exchange is collective; a fabric
// peer id is a world rank.
#pragma once
#include <mpi.h>

#include <string>

#include "result.h"
#include "throttle/triggered_budget.h"
#include "transport/ofi/doorbell_agent.h"
#include "transport/ofi/fabric.h"

namespace mpix::core::internode {

// Collective over MPI_COMM_WORLD; call right after the underlying MPI_Init.
void open_if_needed();
// Stops the doorbell agent and closes the fabric; call right before the underlying MPI_Finalize,
// after every wait for operations already posted (collective over MPI_COMM_WORLD where the
// transport is open).
void close();
// Whether the transport is up; otherwise an error saying why (provider, settings).
Result available();

ofi::Fabric &fabric();
ofi::DoorbellAgent &doorbells();
throttle::TriggeredBudget &budget();
// Reserves `ops` triggered-operation slots, completed once the counter reaches `threshold`
// (checked in reservation order). Errors name MPIX_ST_THROTTLE / MPIX_ST_TRIGGERED_OPS_MAX.
Result reserve(uint64_t ops, ofi::Counter completion, uint64_t threshold);

// How long a host-side wait for triggered operations lasts: the watchdog, or a day without one.
uint64_t wait_limit_ms();

// An MPI_ERR_OTHER naming `what` failed and the transport's last error.
Result transport_failure(const char *what);

// Every reservation completed by `completion` is complete (its window waited for them): the
// counter may be released, and the budget counts those slots free.
void forget_completed(ofi::Counter completion);

}  // namespace mpix::core::internode
