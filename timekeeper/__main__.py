from timekeeper.cli import main

raise SystemExit(main())
