"""What ships to the customer's machines: the diagnostics kit and the pilot folder."""
