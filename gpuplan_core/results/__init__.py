"""Every typed result the engines return and the pages, the report and the CLI read: one shape per concept.

Sits just above ``scenario/`` and below the engines (``memory/``, ``perf/``, ``plan/``), so an engine returns the
type it is reported as (no twin type, no copier). Each module holds one area's results: ``base`` (the frozen report
base and sparse JSON), ``bands`` (how far to trust a number), ``plan`` (the layout search's picks, rows and the
why-chain's steps). Units live in the field names.
"""
