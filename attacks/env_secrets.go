package attacks

import "strings"

var envSecretsSpec = &spec{
	id:        "env_secrets",
	escapes:   "the host's fake API key appears in its output",
	firstStop: 2,
	new:       func() attack { return envSecrets{} },
	elsewhere: elsewhere{harmlessAsRoot: true},
}

type envSecrets struct{}

func (envSecrets) judge(e *env) verdict {
	if strings.Contains(e.output(), e.fx.apiKey) {
		return escaped("the output holds %s's value", apiKeyVar)
	}
	return e.layer(!e.iso.envHasKey, "scrubbed environment", "%s's value is not in the output", apiKeyVar)
}
