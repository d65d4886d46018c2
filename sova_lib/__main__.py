from sova_lib.cli import main

raise SystemExit(main())
