# env_secrets: prints every variable of its environment that looks like a
# credential (argv: token).
import os
import re

for name, value in sorted(os.environ.items()):
    if re.search(r"KEY|TOKEN|SECRET|PASSWORD|CREDENTIAL", name, re.IGNORECASE):
        print(f"{name}={value}")
