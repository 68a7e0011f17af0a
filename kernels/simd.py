"""Vector helpers numba does not derive by itself: LLVM intrinsics for kernels.

``row_diff(a, i, b, j, width)``: the bits of ``a[i, f] != b[j, f]`` for ``f`` in
``0 .. width - 1`` (bit ``f`` set where the two differ), ``a`` and ``b`` two
C-contiguous 2-d int64 arrays and ``width`` a compile-time constant. Written
as one vector compare of the two rows (``icmp ne <width x i64>``, then the
``<width x i1>`` read as an integer): on a machine with AVX-512 two
instructions per row, where numba's loop of scalar compares, shifts and ors
was about 60 (LLVM's SLP vectoriser does not turn that loop into vector
code). On a machine without wide vectors LLVM lowers the same IR to scalar
code: the result is the same everywhere. The caller guarantees that both rows
have ``width`` fields (``i``, ``j`` and ``width`` in bounds); nothing is
checked, as in a kernel compiled without bounds checks.
"""

from llvmlite import ir
from numba.core import cgutils, types
from numba.extending import intrinsic


@intrinsic
def row_diff(typingctx, a, i, b, j, width):
    """See the module docstring."""
    if not isinstance(width, types.IntegerLiteral):
        return None  # the width must be a literal (a constant of the caller)
    n = width.literal_value
    for arr in (a, b):
        if not (isinstance(arr, types.Array) and arr.ndim == 2 and arr.dtype == types.int64):
            return None
        if arr.layout != "C":
            return None
    sig = types.int64(a, i, b, j, width)

    def codegen(context, builder, signature, args):
        a_ty, i_ty, b_ty, j_ty, _ = signature.args
        zero = context.get_constant(types.intp, 0)
        vec = ir.VectorType(ir.IntType(64), n)
        rows = []
        for arr_ty, arr, idx_ty, idx in (
            (a_ty, args[0], i_ty, args[1]),
            (b_ty, args[2], j_ty, args[3]),
        ):
            ary = context.make_array(arr_ty)(context, builder, arr)
            idx = context.cast(builder, idx, idx_ty, types.intp)
            ptr = cgutils.get_item_pointer2(
                context,
                builder,
                data=ary.data,
                shape=cgutils.unpack_tuple(builder, ary.shape, 2),
                strides=cgutils.unpack_tuple(builder, ary.strides, 2),
                layout=arr_ty.layout,
                inds=[idx, zero],
                wraparound=False,
            )
            rows.append(builder.load(builder.bitcast(ptr, vec.as_pointer()), align=8))
        ne = builder.icmp_unsigned("!=", rows[0], rows[1])
        bits = builder.bitcast(ne, ir.IntType(n))
        return builder.zext(bits, ir.IntType(64))

    return sig, codegen
