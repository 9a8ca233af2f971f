// ChildCrawlSource: a TopologySource that crawls in a short-lived child process.
//
// Why: libibnetdisc opens and registers a fresh umad port for every crawl, and through ibsim's
// umad2sim a process can only do that a limited number of times (after ~15 crawls agent
// registration fails with "Failed to register SMI_DIRECT agent" and every later crawl in that
// process fails). A daemon crawls forever, so each crawl runs in its own process: the child
// (`ibfabricd --crawl-once ...`, see crawl_child.h) crawls once, prints the topology's JSON model
// ("ibfabric.topology/1") on stdout and exits; the parent rebuilds the snapshot with
// topologyFromJson(). A child that hangs is killed after `timeout`; one that fails has its last
// stderr line reported as the CrawlError. The parent never loads libibnetdisc state at all, and
// a crash in the crawl cannot take the daemon down.
//
// Cost (measured, docs/daemon.md): process start + JSON round trip add a few milliseconds on
// small fabrics; the crawl itself dominates on large ones.
//
// Used from one thread at a time (the service's discovery thread); cancel() may be called from
// any thread and makes a running discover() kill its child and throw CrawlError promptly.
#pragma once

#include <atomic>
#include <chrono>
#include <string>
#include <vector>

#include "discovery/crawler.h"

namespace ibfabric::api {

class ChildCrawlSource final : public TopologySource {
 public:
  /// `argv`: the child command; argv[0] is an absolute path or looked up in PATH.
  ChildCrawlSource(std::vector<std::string> argv, std::chrono::milliseconds timeout);

  TopologyPtr discover() override;
  std::string describe() const override;
  void cancel() { cancelled_ = true; }

 private:
  std::vector<std::string> argv_;
  std::chrono::milliseconds timeout_;
  std::atomic<bool> cancelled_{false};
  /// The last document's size: the next one is read into a buffer of about that size (a text
  /// grown by doubling held up to twice its 37 MB at 10,240 HCAs, plus the copy).
  std::size_t lastDocumentBytes_ = 0;
};

}  // namespace ibfabric::api
