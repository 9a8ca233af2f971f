// The MAD engine's options from the daemon's configuration (`mad.*`, docs/daemon.md): the one
// place that maps the config keys onto MadEngineOptions, so the sweeps' engine (and the LFT
// reads and probes that ride on it) get the configured policy.
#pragma once

#include "api/daemon/service_config.h"
#include "telemetry/mad_engine.h"

namespace ibfabric::api {

/// The limits and policy of `config.mad*`; the batch watchdog and the rest keep their defaults.
mad::MadEngineOptions madEngineOptions(const ServiceConfig& config);

}  // namespace ibfabric::api
