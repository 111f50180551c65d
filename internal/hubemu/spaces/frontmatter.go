package spaces

import (
	"strconv"

	"github.com/robothub/robothub/core/hub/card"
)

// cardData is a README's YAML front matter, as the hub shows it in a repo's cardData.
type cardData map[string]any

// tags returns the card's tags list: every item as a string, without duplicates, in order.
func (c cardData) tags() []string {
	list, _ := c["tags"].([]any)
	seen := map[string]bool{}
	out := []string{}
	for _, v := range list {
		s, ok := scalarString(v)
		if !ok || s == "" || seen[s] {
			continue
		}
		seen[s] = true
		out = append(out, s)
	}
	return out
}

func scalarString(v any) (string, bool) {
	switch v := v.(type) {
	case string:
		return v, true
	case bool:
		return strconv.FormatBool(v), true
	case int64:
		return strconv.FormatInt(v, 10), true
	case float64:
		return strconv.FormatFloat(v, 'g', -1, 64), true
	}
	return "", false
}

// parseFrontMatter reads the YAML front matter at the head of a README with core/hub's card reader.
// A README without front matter, or with front matter that is not valid, has an empty card: the space is stored all the same, as the public hub stores it, without tags.
func parseFrontMatter(readme []byte) cardData {
	text, first, err := card.Split(readme)
	if err != nil {
		return cardData{}
	}
	doc, err := card.Parse(text, first)
	if err != nil {
		return cardData{}
	}
	if m, ok := card.Data(doc).(map[string]any); ok {
		return m
	}
	return cardData{}
}
