from .interface.cli import main

raise SystemExit(main())
