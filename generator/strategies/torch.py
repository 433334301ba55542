"""torch: the unfused torch path (no kernel): always a candidate, in every bucket."""

from __future__ import annotations

from mlpgen.strategies.base import Strategy

STRATEGY = Strategy(name="torch", domain={}, row_tiled=False, takes_pdl=False)
