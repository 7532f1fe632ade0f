/* sincos_body.h: the body of lane_sincos (lane.h) for |q| <= 1e5, written once for the
 * W lanes of the CPU and for one state on the GPU (no libm there): included inside the
 * function, after it defines SINCOS_FMA(a, b, c) = a b + c rounded once (b a lane),
 * SINCOS_SPLAT(x), and SINCOS_BITS(x) and SINCOS_LANE(b), which reinterpret a lane as the
 * unsigned 64-bit integers of type `bits` and back. q is the angle; s and c receive.
 *
 * One range reduction: q = k pi/2 + r with |r| <= pi/4 (pi/2 in three parts, Cody and
 * Waite, exact enough for |q| <= 1e5), polynomials in r^2 of degree 6 and 7 (the Taylor
 * series economized on that interval by Chebyshev's polynomials: below 4e-18 relative
 * from sin and cos, two and one multiply-adds fewer than Taylor's of the same accuracy),
 * then the quadrant k mod 4 swaps and signs them. Multiply-adds are written out, so that
 * every build rounds as the -ffp-contract=fast one: the reduction needs k times each part
 * of pi/2 exactly. No include guard: each use includes it. */
#define FMA(a, b, c) SINCOS_FMA(a, SINCOS_SPLAT(b), c)
#define HORNER(p, coefficient) p = SINCOS_FMA(r2, p, SINCOS_SPLAT(coefficient))
const double shifter = 0x1.8p52; /* k + shifter keeps the integer k in its low bits */
const lane t = FMA(q, 0x1.45f306dc9c883p-1, SINCOS_SPLAT(shifter)); /* 2 / pi */
const lane k = t - shifter;
lane r = FMA(k, -0x1.921fb54442d18p+0, q);
r = FMA(k, -0x1.1a62633145c07p-54, r);
r = FMA(k, 0x1.f1976b7ed8fbcp-110, r);
const lane r2 = r * r;
lane ps = SINCOS_SPLAT(0x1.5d87732d7eadap-33); /* sin r / r - 1 over r^2 */
HORNER(ps, -0x1.ae5e380bb0f29p-26);
HORNER(ps, 0x1.71de3530db2e8p-19);
HORNER(ps, -0x1.a01a019ba995ap-13);
HORNER(ps, 0x1.111111110f3dep-7);
HORNER(ps, -0x1.5555555555543p-3);
const lane sin_r = SINCOS_FMA(r * r2, ps, r);
lane pc = SINCOS_SPLAT(-0x1.8f762f90d0ba6p-37); /* (cos r - 1) / r^2 */
HORNER(pc, 0x1.1ee96d13ea1f8p-29);
HORNER(pc, -0x1.27e4f72810294p-22);
HORNER(pc, 0x1.a01a019b1e593p-16);
HORNER(pc, -0x1.6c16c16c13a08p-10);
HORNER(pc, 0x1.5555555555536p-5);
HORNER(pc, -0.5);
const lane cos_r = SINCOS_FMA(r2, pc, SINCOS_SPLAT(1.0));
#undef FMA
#undef HORNER
/* k mod 4 = n: sin q = (sin r, cos r, -sin r, -cos r)[n], cos q = (cos r, -sin r,
 * -cos r, sin r)[n] */
const bits n = SINCOS_BITS(t), odd = -(n & 1), sb = SINCOS_BITS(sin_r), cb = SINCOS_BITS(cos_r);
const bits sign_sin = (n & 2) << 62, sign_cos = ((n + 1) & 2) << 62;
*s = SINCOS_LANE(((sb & ~odd) | (cb & odd)) ^ sign_sin);
*c = SINCOS_LANE(((cb & ~odd) | (sb & odd)) ^ sign_cos);
#undef SINCOS_FMA
#undef SINCOS_SPLAT
#undef SINCOS_BITS
#undef SINCOS_LANE
