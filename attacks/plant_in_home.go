package attacks

import "strings"

func init() {
	register(attack{
		id:        "plant_in_home",
		escapes:   "a file in the fake home changes on the host",
		firstStop: 5,
		args:      func(t *trial) []string { return []string{t.fx.home} },
		judge:     judgePlantInHome,
	})
}

func judgePlantInHome(t *trial) verdict {
	after, err := snapshot(t.fx.home)
	if err != nil {
		return escaped("the fake home cannot be read any more: %v", err)
	}
	if diff := changes(t.fx.homeBefore, after); len(diff) > 0 {
		return escaped("in the fake home: %s", strings.Join(diff, ", "))
	}
	return t.programLayer(t.iso.homeCovered, "hidden by mount namespace", "the fake home is unchanged on the host")
}
