// PlacementEngine (placement_engine.h): the request checked, the eligible hosts pooled by block,
// candidates generated and scored under bounds, the best improved by local search, the answer.
#include <memory>
#include <utility>

#include "routing/placement/block_pools.h"
#include "routing/placement/candidate_generation.h"
#include "routing/placement/candidate_set.h"
#include "routing/placement/eligibility.h"
#include "routing/placement/evaluator.h"
#include "routing/placement/local_search.h"
#include "routing/placement/request.h"
#include "routing/placement/score_report.h"
#include "routing/placement_engine.h"

namespace ibfabric::routing {

namespace {

/// The best `alternatives` candidates with their scores (scored again with their hottest links
/// when their evaluation has none), and the warnings.
PlacementAnswer answerOf(placement::Evaluator& evaluator, const placement::CandidateSet& candidates,
                         std::size_t alternatives, CommPattern pattern,
                         placement::Warnings& warnings) {
  const PlacementIndex& ix = evaluator.context().ix;
  PlacementAnswer answer;
  for (std::size_t i = 0; i < candidates.size() && i < alternatives; ++i) {
    const placement::Candidate& c = candidates[i];
    PlacementOption option;
    for (placement::HostId h : c.order) option.hosts.push_back(ix.hosts()[h].name);
    option.score = c.eval.hasHottest
                       ? placement::scoreReport(evaluator.context(), c.order, pattern, c.eval)
                       : evaluator.score(c.order, pattern);
    answer.options.push_back(std::move(option));
  }
  answer.warnings = warnings.take();
  return answer;
}

}  // namespace

PlacementEngine::PlacementEngine(PlacementIndexPtr index, std::shared_ptr<const LinkLoadModel> load,
                                 PlacementLimits limits)
    : index_(std::move(index)), load_(std::move(load)), limits_(limits) {
  if (!index_) throw PlacementError(PlacementError::Kind::kNotReady, "no placement index");
  if (!load_) {
    load_ = std::make_shared<const LinkLoadModel>(index_->topologyPtr());
  } else if (load_->size() != index_->topology().links().size() * 2) {
    throw PlacementError(PlacementError::Kind::kNotReady,
                         "link load belongs to another topology snapshot");
  }
  residual_.resize(load_->size());
  utilization_.resize(load_->size());
  for (DirectedLinkId d = 0; d < load_->size(); ++d) {
    residual_[d] = load_->at(d).residualBytesPerSecond();
    utilization_[d] = load_->at(d).utilization;
  }
}

PlacementScore PlacementEngine::score(const std::vector<std::string>& hostsInRankOrder,
                                      CommPattern pattern) const {
  const Topology& topo = index_->topology();
  placement::Order order;
  for (const auto& name : hostsInRankOrder) {
    const Host* h = topo.findHost(name);
    if (!h) {
      throw PlacementError(PlacementError::Kind::kInvalidRequest, "unknown host '" + name + "'");
    }
    order.push_back(static_cast<placement::HostId>(h - topo.hosts().data()));
  }
  placement::Evaluator evaluator({*index_, *load_, limits_, residual_, utilization_});
  return evaluator.score(order, pattern);
}

PlacementAnswer PlacementEngine::place(const PlacementRequest& request) const {
  using namespace placement;
  const std::size_t n = hostsWanted(request);
  Warnings warnings(limits_.maxWarnings);
  const EligibleHosts eligible = eligibleHosts(*index_, *load_, request, n, warnings);

  const ScoringContext ctx{*index_, *load_, limits_, residual_, utilization_};
  Evaluator evaluator(ctx);
  const BlockPools pools = blockPools(ctx, eligible.eligible);
  CandidateSet candidates(evaluator, request.pattern);
  CandidateGenerator(evaluator, pools, eligible, n, request.pattern, candidates).generate();
  if (candidates.empty()) {
    throw PlacementError(PlacementError::Kind::kUnsatisfiable,
                         "no candidate set of " + std::to_string(n) + " hosts could be formed");
  }
  // The answer returns the best K; the local search starts from the best 4, evaluated when it
  // gets to them.
  const auto alternatives = static_cast<std::size_t>(request.alternatives);
  candidates.evaluateBest(limits_.pruneByBound ? alternatives : candidates.size());
  candidates.sortBest();
  LocalSearch(evaluator, candidates, pools, request.pattern, eligible.count).run();
  return answerOf(evaluator, candidates, alternatives, request.pattern, warnings);
}

PlacementAnswer place(const PlacementInput& input, const PlacementRequest& request) {
  auto index = std::make_shared<const PlacementIndex>(input.topology, input.tables);
  PlacementEngine engine(std::move(index), input.load);
  return engine.place(request);
}

}  // namespace ibfabric::routing
