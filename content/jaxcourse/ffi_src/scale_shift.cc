// 进阶 05 的 XLA FFI 算子：y = x * scale + 1（float32，任意形状）。
// scale 是编译期属性（attribute），不是输入数组；头文件来自 jax.ffi.include_dir()。
#include <cstdint>

#include "xla/ffi/api/ffi.h"

namespace ffi = xla::ffi;

// 真正的计算：逐元素循环。Buffer 只给出指针和维度，数据在 XLA 管理的内存里，不拷贝。
static ffi::Error ScaleShiftImpl(float scale, ffi::Buffer<ffi::F32> x,
                                 ffi::ResultBuffer<ffi::F32> y) {
  const float* in = x.typed_data();
  float* out = y->typed_data();
  const int64_t n = static_cast<int64_t>(x.element_count());
  for (int64_t i = 0; i < n; ++i) out[i] = in[i] * scale + 1.0f;
  return ffi::Error::Success();
}

// 导出一个 C 符号 ScaleShift：XLA 调用它时按 Bind() 的声明解码属性、输入和输出。
XLA_FFI_DEFINE_HANDLER_SYMBOL(ScaleShift, ScaleShiftImpl,
                              ffi::Ffi::Bind()
                                  .Attr<float>("scale")
                                  .Arg<ffi::Buffer<ffi::F32>>()
                                  .Ret<ffi::Buffer<ffi::F32>>());
