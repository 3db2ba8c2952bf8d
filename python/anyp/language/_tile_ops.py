"""anyp.language._tile_ops — pl's tile compute ops (matmul, reductions,
expansions, unary and comparison ops, casts, reshapes, transposes) and the
block queries, over anyp._core's bind_tile_math. Re-exported by
anyp.language."""

__all__ = []
