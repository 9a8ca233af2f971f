// The subnet collector: which subnet this daemon sees (api/service/ha_status.h), one series to
// join every other on (docs/scale-out.md): the operator's name, the GID prefix, the master SM.
#include "api/metrics/collectors.h"

namespace ibfabric::api {
namespace {

constexpr MetricFamily kInfo{
    "ibfabric_subnet_info",
    "The subnet this daemon sees: subnet (the operator's subnet_name), subnet_prefix (GID "
    "prefix of the local port) and sm_guid (the master SM's port GUID); value 1",
    "gauge"};

class SubnetCollector final : public Collector {
 public:
  std::string_view name() const override { return "subnet"; }
  void collect(const CollectContext& c, MetricWriter& out) const override {
    const SubnetIdentity& id = c.state.subnetId;
    out.family(kInfo);
    out.sampleU(kInfo.name,
                Labels("subnet", id.name)
                    .add("subnet_prefix", id.gidPrefix ? formatGidPrefix(*id.gidPrefix) : "")
                    .add("sm_guid", id.smPortGuid ? toString(*id.smPortGuid) : ""),
                1);
  }
};

}  // namespace

CollectorPtr subnetCollector() { return std::make_unique<SubnetCollector>(); }

}  // namespace ibfabric::api
