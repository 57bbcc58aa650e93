"""The product story, once: its data (`script`), its steps (`steps`) and the ways to drive it
(`drivers`), for `factledger demo` and every test that tells it."""
