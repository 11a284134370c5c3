"""The thin UI layer: the frame (navigation, sidebar, scenario), widgets from the input registry, cache
wrappers, figure and table builders. Numbers come from gpuplan_core; pages under app_pages/ hold layout."""
