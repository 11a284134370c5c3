"""gpuplan: which GPU should we rent, how many, and what will it cost?

The frame (gpuplan_ui/frame.py) builds the navigation, the sidebar and the scenario, then runs the page.
"""

from gpuplan_ui import frame

frame.run()
