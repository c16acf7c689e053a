"""Every write of the pilot: kit tokens (`tokens`), the kits themselves (`kits`), reports
(`reports`) and the decision log (`decisions`)."""
