// timeline.cpp — names of the timeline's op kinds and ports (anyp/timeline.hpp).
#include "anyp/timeline.hpp"

namespace anyp {

const char* timeline_op_kind_name(TimelineOp::Kind k) {
  switch (k) {
    case TimelineOp::Kind::LocalRead:
      return "local read";
    case TimelineOp::Kind::LocalWrite:
      return "local write";
    case TimelineOp::Kind::RemoteRead:
      return "remote read";
    case TimelineOp::Kind::RemoteWrite:
      return "remote write";
    case TimelineOp::Kind::Compute:
      return "compute";
    case TimelineOp::Kind::Notify:
      return "notify";
    case TimelineOp::Kind::Wait:
      return "wait";
  }
  return "?";
}

const char* timeline_port_name(TimelineLink::Port p) {
  switch (p) {
    case TimelineLink::Port::Out:
      return "port out";
    case TimelineLink::Port::In:
      return "port in";
    case TimelineLink::Port::InterNodeOut:
      return "inter-node port out";
    case TimelineLink::Port::InterNodeIn:
      return "inter-node port in";
  }
  return "?";
}

}  // namespace anyp
