"""The ledger of every call Assay makes to a provider (DESIGN §9 "one ledger"): what it
cost, its tokens, the model that made it and its purpose, and, for calls serving a run,
that run.

Two tables hold it, each written in the transaction that changes what it sums:
- a run's own cells are on `target_days` (reports/rollups.add_finished), written with the
  batch of outputs they produced: the engine's 2,000 calls/s path adds no row of its own,
  its per-batch upsert already is the record;
- every other call is on `spend_days` through `record` (book.py), the one function that
  writes it, from a `Tab` of what the calls cost per model (a `Metered` judge call adds up
  judge replies; `Tab.of_scores` reads what a batch's scores say their judges cost).

Before it is sent, a call's most cost is held against the caps that bind it (runs/budget.py
for a run's cells, runs/judge_spend.py for judging what a run recorded or compared,
experiments/spend.py for calls outside runs), and the hold is settled with the record or
released when nothing was sent. The cost and token reports (reports/costs.py) are sums of
these two tables, by purpose and by the model that made the call.
"""

from assay.core.ledger.book import PURPOSES, Tab, Usage, record
from assay.core.ledger.metered import Metered

__all__ = ["PURPOSES", "Metered", "Tab", "Usage", "record"]
