from scim_edge.cli import main

raise SystemExit(main())
