// A build without CUDA: there is no rematch stream, and no CUDA array gets past import_dlpack to need one.
#include "python/src/cuda_streams.h"

#include "tensor/device.h"
#include "tensor/error.h"

namespace rematch::python {

uintptr_t rematch_stream(int device) {
  REMATCH_FAIL("cuda:", device, ": ", cuda_unavailable_reason(), "; pass CPU arrays");
}

void consumer_waits_for_rematch(int, uintptr_t) {}
void rematch_waits_for_consumer(int, uintptr_t) {}

}  // namespace rematch::python
