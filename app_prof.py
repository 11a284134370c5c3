import cProfile, sys
from gpuplan_ui import frame
PR = sys.modules.setdefault("_prof_holder", type(sys)("_prof_holder"))
if not hasattr(PR, "p"): PR.p = cProfile.Profile(); PR.n = 0
PR.p.enable()
try:
    frame.run()
finally:
    PR.p.disable(); PR.n += 1
