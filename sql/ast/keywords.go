package ast

import "strings"

// reserved lists the words that cannot be used as bare identifiers. The list
// is deliberately shorter than Calcite's: only words whose use as a name
// would make the grammar ambiguous, so that columns such as `status`,
// `comment` or `date` need no quotes.
var reserved = map[string]bool{}

func init() {
	for _, w := range strings.Fields(`
		ALL AND ARRAY AS ASC BETWEEN BY CASE CAST CREATE CROSS CURRENT_DATE
		CURRENT_TIME CURRENT_TIMESTAMP DESC DISTINCT DROP ELSE END ESCAPE EXCEPT
		EXISTS FALSE FETCH FOR FROM FULL GROUP HAVING IN INNER INSERT INTERSECT
		INTERVAL INTO IS JOIN LATERAL LEFT LIKE LIMIT LOCALTIME LOCALTIMESTAMP
		MAP MATCH_RECOGNIZE MULTISET NATURAL NOT NULL OFFSET ON OR ORDER OUTER
		OVER PARTITION RIGHT ROW SELECT SIMILAR TABLE THEN TRUE UNION UNKNOWN
		UNNEST USING VALUES WHEN WHERE WINDOW WITH`) {
		reserved[w] = true
	}
}

// IsReserved reports whether word (any case) is a reserved word, which must
// be back-quoted to be used as an identifier.
func IsReserved(word string) bool {
	if len(word) > 20 {
		return false
	}
	return reserved[strings.ToUpper(word)]
}
