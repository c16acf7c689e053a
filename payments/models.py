# Payments (stablecoins on EVM networks, USD balance ledger) arrive in the next issues.
