// Element types of a Tensor and the one dispatch helper every kernel uses.
// float32 is the working type; float64 exists for gradient checks and references; int32/int64 hold indices;
// bool and uint8 hold masks and raw bytes.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <type_traits>

namespace rematch {

enum class DType : uint8_t { Float32, Float64, Int32, Int64, Bool, UInt8 };

constexpr size_t dtype_size(DType t) {
  switch (t) {
    case DType::Float32: return 4;
    case DType::Float64: return 8;
    case DType::Int32: return 4;
    case DType::Int64: return 8;
    case DType::Bool: return 1;
    case DType::UInt8: return 1;
  }
  return 0;
}

constexpr const char* dtype_name(DType t) {
  switch (t) {
    case DType::Float32: return "float32";
    case DType::Float64: return "float64";
    case DType::Int32: return "int32";
    case DType::Int64: return "int64";
    case DType::Bool: return "bool";
    case DType::UInt8: return "uint8";
  }
  return "?";
}

constexpr bool is_floating(DType t) { return t == DType::Float32 || t == DType::Float64; }
constexpr bool is_index_dtype(DType t) { return t == DType::Int32 || t == DType::Int64; }

template <typename T> struct dtype_of;
template <> struct dtype_of<float> { static constexpr DType value = DType::Float32; };
template <> struct dtype_of<double> { static constexpr DType value = DType::Float64; };
template <> struct dtype_of<int32_t> { static constexpr DType value = DType::Int32; };
template <> struct dtype_of<int64_t> { static constexpr DType value = DType::Int64; };
template <> struct dtype_of<bool> { static constexpr DType value = DType::Bool; };
template <> struct dtype_of<uint8_t> { static constexpr DType value = DType::UInt8; };

template <typename T> struct type_tag { using type = T; };

// Calls f(type_tag<T>{}) with the C++ type of `t`: `dispatch_all(t, [&](auto tag) { using T = typename
// decltype(tag)::type; ... })`. The `_float` variant accepts only floating types and names `op` otherwise.
// (Defined in tensor/dtype.cpp, which needs only tensor/error.h.)
void throw_dtype_unsupported(const char* op, DType t, const char* expected);

template <typename F> decltype(auto) dispatch_all(DType t, F&& f) {
  switch (t) {
    case DType::Float32: return f(type_tag<float>{});
    case DType::Float64: return f(type_tag<double>{});
    case DType::Int32: return f(type_tag<int32_t>{});
    case DType::Int64: return f(type_tag<int64_t>{});
    case DType::Bool: return f(type_tag<bool>{});
    case DType::UInt8: return f(type_tag<uint8_t>{});
  }
  throw_dtype_unsupported("dispatch", t, "a known dtype");
  return f(type_tag<float>{});
}

template <typename F> decltype(auto) dispatch_float(const char* op, DType t, F&& f) {
  switch (t) {
    case DType::Float32: return f(type_tag<float>{});
    case DType::Float64: return f(type_tag<double>{});
    default: throw_dtype_unsupported(op, t, "float32 or float64");
  }
  return f(type_tag<float>{});
}

// Numeric types: everything but bool (arithmetic on masks is refused rather than silently promoted).
template <typename F> decltype(auto) dispatch_numeric(const char* op, DType t, F&& f) {
  switch (t) {
    case DType::Float32: return f(type_tag<float>{});
    case DType::Float64: return f(type_tag<double>{});
    case DType::Int32: return f(type_tag<int32_t>{});
    case DType::Int64: return f(type_tag<int64_t>{});
    case DType::UInt8: return f(type_tag<uint8_t>{});
    default: throw_dtype_unsupported(op, t, "a numeric dtype (not bool)");
  }
  return f(type_tag<float>{});
}

template <typename F> decltype(auto) dispatch_index(const char* op, DType t, F&& f) {
  switch (t) {
    case DType::Int32: return f(type_tag<int32_t>{});
    case DType::Int64: return f(type_tag<int64_t>{});
    default: throw_dtype_unsupported(op, t, "an index dtype (int32 or int64)");
  }
  return f(type_tag<int64_t>{});
}

}  // namespace rematch
