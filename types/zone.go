package types

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// LoadZone resolves a table.local-time-zone value: an IANA name
// ("Asia/Tokyo"), "UTC"/"Z"/"" (UTC), or a fixed offset ("+08:00",
// "GMT+8", "UTC-05:30").
func LoadZone(name string) (*time.Location, error) {
	n := strings.TrimSpace(name)
	switch strings.ToUpper(n) {
	case "", "UTC", "Z", "GMT":
		return time.UTC, nil
	}
	off := n
	for _, p := range []string{"GMT", "UTC"} {
		if strings.HasPrefix(strings.ToUpper(off), p) {
			off = off[len(p):]
		}
	}
	if off != "" && (off[0] == '+' || off[0] == '-') {
		sign := 1
		if off[0] == '-' {
			sign = -1
		}
		h, m, _ := strings.Cut(off[1:], ":")
		hh, err1 := strconv.Atoi(h)
		mm := 0
		var err2 error
		if m != "" {
			mm, err2 = strconv.Atoi(m)
		}
		if err1 == nil && err2 == nil && hh <= 18 && mm < 60 {
			return time.FixedZone(n, sign*(hh*3600+mm*60)), nil
		}
	}
	loc, err := time.LoadLocation(n)
	if err != nil {
		return nil, fmt.Errorf("invalid time zone '%s' in table.local-time-zone (use a zone id such as UTC or Asia/Tokyo, or an offset such as +08:00)", name)
	}
	return loc, nil
}
