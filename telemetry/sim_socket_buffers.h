// Simulator socket buffers: under umad2sim (ibsim's libumad shim, loaded with LD_PRELOAD) every
// MAD goes over a Unix datagram socket pair between this process and ibsim. The pair is
// connected both ways, so the kernel applies no queue-length flow control, only the sender's
// send buffer (212,992 bytes by default: about 740 MADs). When a slow simulator lets our MADs
// fill it, umad_send() blocks inside umad2sim holding umad2sim's lock; umad2sim's reader thread
// then cannot take ibsim's replies, ibsim spins on its write to us and stops reading, and both
// wait on each other for good (docs/mad-engine.md). Widening the send buffers of those sockets
// keeps a burst of re-sends from ever blocking the sender. A no-op without umad2sim.
#pragma once

#include <string>

namespace ibfabric::mad {

/// True when umad2sim is preloaded into this process.
bool underUmad2sim();

/// Under umad2sim: sets the send buffer of every Unix datagram socket of this process to
/// `bytes` (SO_SNDBUFFORCE, which needs CAP_NET_ADMIN; SO_SNDBUF, capped by
/// net.core.wmem_max, otherwise). Returns how many sockets were widened; `note` says what
/// could not be done. Call after the umad port is open (umad2sim connects its socket then).
int widenSimulatorSocketBuffers(int bytes, std::string& note);

}  // namespace ibfabric::mad
