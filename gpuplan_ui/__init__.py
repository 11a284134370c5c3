"""The thin UI layer: shared sidebar, scenario from widgets, cache wrappers, figure builders.

It lives outside ``pages/`` (any .py in pages/ becomes a page). Numbers come from gpuplan_core.
"""
