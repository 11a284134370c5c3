"""Unit constants. Everything inside gpuplan_core is in bytes, seconds, FLOPs and US dollars;
the names of variables carry their unit (``vram_bytes``, ``bandwidth_bytes_per_s``).

GB is decimal (10**9 bytes), GiB is binary (2**30 bytes). The UI always says which one it shows.
"""

GB = 10**9
GiB = 2**30
MB = 10**6
TB = 10**12
TFLOP = 10**12
HOURS_PER_MONTH = 730.0  # 8,760 h / 12, the usual convention (AWS calculator, infracost)
SECONDS_PER_HOUR = 3600.0
SECONDS_PER_DAY = 86_400
