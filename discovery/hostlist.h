// Slurm-style host lists: "dgx[0001-0004,0009],login1" <-> {"dgx0001", ..., "dgx0009", "login1"}.
//
// compressHostlist groups names by their prefix and the width of their numeric suffix (so
// zero-padding survives the round trip: dgx0009 stays 0009) and writes each group as
// prefix[ranges], or the bare name for a group of one. Output is sorted by prefix, then number;
// duplicates are dropped. expandHostlist is its inverse and also accepts what Slurm writes
// (e.g. "n[1-3,7]", "a1,b[01-02]"); one bracket group per name. Pure functions; thread-safe.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace ibfabric {

std::string compressHostlist(std::vector<std::string> names);

/// Throws std::invalid_argument (naming the offending part) on malformed input: unbalanced
/// brackets, an empty or descending range, a non-numeric bound, more than one bracket group.
/// `limit` guards against "n[1-99999999]": more names than that is an error.
std::vector<std::string> expandHostlist(std::string_view list, std::size_t limit = 1'000'000);

}  // namespace ibfabric
