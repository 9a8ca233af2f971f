// Clearing a port's counters (POST /api/v1/ports/{guid}/{port}/clear-counters): the PMA SETs a
// CounterSource sends, and the outcome it reports back.
//
// PortCounters is cleared with every CounterSelect bit (and CounterSelect2 bit 0, PortXmitWait)
// through telemetry::buildPortCountersClear; PortCountersExtended, when the node's ClassPortInfo
// says it has extended counters, with buildPortCountersExtendedClear below. Both are built with
// libibmad's field tables. Pure functions; thread-safe.
#pragma once

#include <cstdint>
#include <string>

#include "telemetry/mad_packet.h"

namespace ibfabric::api {

struct ClearCountersResult {
  enum class Status {
    kOk,           ///< Every SET was answered with status 0.
    kTimeout,      ///< A SET went unanswered (after the engine's retries).
    kRejected,     ///< The PMA answered with an error status.
    kUnsupported,  ///< This source cannot clear counters.
    kNotReady,     ///< No counter source / sweep yet, or the service is stopping.
    kUnknownPort,  ///< No such linked port in the swept topology.
  };
  Status status = Status::kUnsupported;
  bool extended = false;  ///< PortCountersExtended was cleared too.
  std::string message;    ///< One line; empty when kOk.
};

/// A PortCountersExtended SET clearing the data and packet counters (CounterSelect bits 0..7)
/// of `portSelect`, and with `errorCounters` (CapabilityMask2 bit 1) the 64-bit error counters
/// too (CounterSelect2 all ones).
mad::MadBuffer buildPortCountersExtendedClear(std::uint8_t portSelect, bool errorCounters);

}  // namespace ibfabric::api
