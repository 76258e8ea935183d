// The dispatch of the elementwise family, generated from the table of tensor/elementwise_ops.h and shared by
// the two backends (tensor/cpu/elementwise.cpp with its math policy, tensor/cuda/elementwise.cu with its own).
// unary<Math>(op, dtype, map) switches on the op, then on the dtype among those the op's row accepts, and calls
//   map(type_tag<Out>{}, type_tag<In>{}, functor)
// once, where the backend runs `functor` over its operands (In the inputs' element type, Out the output's).
// The dtypes were checked by tensor/elementwise.cpp; the switches have no `default`, and the files that
// instantiate them are compiled with -Werror=switch (CMakeLists.txt), so an op without its case does not compile.
#pragma once

#include <type_traits>

#include "tensor/elementwise_functors.h"
#include "tensor/kernels.h"

namespace rematch::elementwise {

using kernels::Accepts;
using kernels::Result;

// f(type_tag<T>{}) for the dtype t among those `A` accepts.
template <Accepts A, class F> void dispatch_accepted(const char* name, DType t, F&& f) {
  if constexpr (A == Accepts::Bool) f(type_tag<bool>{});
  else if constexpr (A == Accepts::Numeric) dispatch_numeric(name, t, f);
  else dispatch_float(name, t, f);
}

template <Result R, class T> using result_t = std::conditional_t<R == Result::Bool, bool, T>;

template <Accepts A, Result R, template <class, class> class F, class M, class Map>
void unary_row(const char* name, DType dtype, Map& map) {
  dispatch_accepted<A>(name, dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    static_assert(std::is_same_v<decltype(F<M, T>{}(T{})), result_t<R, T>>, "the functor's result is the row's");
    map(type_tag<result_t<R, T>>{}, tag, F<M, T>{});
  });
}

template <Accepts A, Result R, template <class, class> class F, class M, class Map>
void scalar_row(const char* name, DType dtype, double s, Map& map) {
  dispatch_accepted<A>(name, dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    with_scalar_functor(type_tag<F<M, T>>{}, s, [&](auto f) {
      static_assert(std::is_same_v<decltype(f(T{})), result_t<R, T>>, "the functor's result is the row's");
      map(type_tag<result_t<R, T>>{}, tag, f);
    });
  });
}

template <Accepts A, Result R, template <class, class> class F, class M, class Map>
void binary_row(const char* name, DType dtype, Map& map) {
  dispatch_accepted<A>(name, dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    static_assert(std::is_same_v<decltype(F<M, T>{}(T{}, T{})), result_t<R, T>>,
                  "the functor's result is the row's");
    map(type_tag<result_t<R, T>>{}, tag, F<M, T>{});
  });
}

template <class M, class Map> void unary(kernels::UnaryOp op, DType dtype, Map&& map) {
  switch (op) {
#define REMATCH_UNARY_CASE(op, name, accepts, result, functor) \
  case kernels::UnaryOp::op:                                  \
    return unary_row<Accepts::accepts, Result::result, functor, M>(name, dtype, map);
    REMATCH_UNARY_OPS(REMATCH_UNARY_CASE)
#undef REMATCH_UNARY_CASE
  }
}

template <class M, class Map> void scalar_op(kernels::ScalarOp op, DType dtype, double s, Map&& map) {
  switch (op) {
#define REMATCH_SCALAR_CASE(op, name, accepts, result, functor) \
  case kernels::ScalarOp::op:                                  \
    return scalar_row<Accepts::accepts, Result::result, functor, M>(name, dtype, s, map);
    REMATCH_SCALAR_OPS(REMATCH_SCALAR_CASE)
#undef REMATCH_SCALAR_CASE
  }
}

template <class M, class Map> void binary(kernels::BinaryOp op, DType dtype, Map&& map) {
  switch (op) {
#define REMATCH_BINARY_CASE(op, name, accepts, result, functor) \
  case kernels::BinaryOp::op:                                  \
    return binary_row<Accepts::accepts, Result::result, functor, M>(name, dtype, map);
    REMATCH_BINARY_OPS(REMATCH_BINARY_CASE)
#undef REMATCH_BINARY_CASE
  }
}

}  // namespace rematch::elementwise
