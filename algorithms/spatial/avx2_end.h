/* avx2_end.h: closes avx2_begin.h (GCC's target pragma lasts to the end of the file). */
#if defined(__clang__)
#pragma clang attribute pop
#endif
