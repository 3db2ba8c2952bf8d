// timeline_event.hpp — one recorded event of an agent (a data access, a
// tile op, a notify or a satisfied wait), what the modeled timeline's
// simulation replays (simulate.hpp); agents' events are kept in runs
// (event_stream.hpp).
#pragma once

#include <cstdint>

#include "anyp/dtype.hpp"
#include "runtime/region.hpp"

namespace anyp::runtime {

struct TimelineEvent {
  enum class Kind : std::uint8_t { Access, Compute, Notify, Wait };
  Kind kind = Kind::Access;
  std::uint8_t sub = 0;  // AccessKind, ComputeClass, NotifyKind or WaitKind
  DType dtype = DType::FP32;
  Space space = Space::Window;  // Access
  SiteRef site;
  std::int32_t id = -1;     // Access: buffer or host argument; Notify/Wait: buffer
  std::int32_t owner = -1;  // Access: the window's rank (-1: host); Notify/Wait: the cell's
  // Access of a put_async: k + 1 when the put was issued before the
  // agent's event k (it is recorded where the door carried it out, at its
  // wait_async); 0 otherwise.
  std::uint32_t issued_before = 0;
  std::int64_t first = 0;   // Access: first byte in the buffer; Notify/Wait: the cell's byte
  std::int64_t end = 0;     // Access: one past the last byte it bounds
  std::int64_t amount = 0;  // Access: bytes; Compute: elements; Notify: value; Wait: expected
};
static_assert(sizeof(TimelineEvent) == 48, "an event record is 48 bytes");

}  // namespace anyp::runtime
