"""The API's resources: orders, payments, the balance, the SSH key and the pilot, each a thin
view over the services and selectors the pages use."""
