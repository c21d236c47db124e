package attacks

import "strings"

func init() {
	register(attack{
		id:        "env_secrets",
		escapes:   "the host's fake API key appears in its output",
		firstStop: 2,
		judge:     judgeEnvSecrets,
	})
}

func judgeEnvSecrets(t *trial) verdict {
	if strings.Contains(t.output(), t.fx.apiKey) {
		return escaped("the output holds %s's value", apiKeyVar)
	}
	return t.layer(!t.iso.envHasKey, "scrubbed environment", "%s's value is not in the output", apiKeyVar)
}
