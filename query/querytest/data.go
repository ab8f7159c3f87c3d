package querytest

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/factum-go/factum/query"
)

// Data is the kit's fixed data set and the clock its date cases assume.
type Data struct {
	// JSON holds the documents as JSON text, for backends that store text:
	// the numbers are written as the cases need (10 and 10.0 both occur).
	JSON []json.RawMessage
	// Documents holds the same documents decoded (numbers as float64).
	Documents []query.Document
	// Now is the instant the date cases are written for: Wednesday
	// 2026-03-11 15:30 in Location.
	Now time.Time
	// Location is where the date cases' days begin: a fixed UTC+8 zone, so
	// that a backend computing days in UTC fails them.
	Location *time.Location
}

// zone is the data set's time zone: UTC+8 without daylight saving.
var zone = time.FixedZone("UTC+8", 8*60*60)

// now is the kit's clock: Wednesday 2026-03-11 15:30 UTC+8.
var now = time.Date(2026, 3, 11, 15, 30, 0, 0, zone)

// at returns epoch milliseconds of a wall time in the kit's zone.
func at(y int, mo time.Month, d, h, mi, s, ms int) int64 {
	return time.Date(y, mo, d, h, mi, s, ms*int(time.Millisecond), zone).UnixMilli()
}

// row is one document: the standard snapshot fields and a state object.
type row struct {
	id, tenant, owner string
	version           int
	deleted           bool
	state             string
}

// rows is the data set. Every document has the fields of a snapshot
// document; the states vary the JSON types field by field (see the comment
// on each) so that the cases can tell type semantics apart.
func rows() []row {
	mar := func(d, h, mi int) int64 { return at(2026, time.March, d, h, mi, 0, 0) }
	return []row{
		{"d01", "t1", "u1", 3, false, fmt.Sprintf(`{"name":"Alpha","qty":10,"price":9.5,"active":true,"tags":["red","blue"],"items":[{"sku":"A1","qty":2},{"sku":"B2","qty":5}],"address":{"city":"Paris","zip":"75001"},"createdAt":%d,"note":"first","scores":[1,2,3]}`, mar(11, 15, 0))},
		// createdAt: the first millisecond of today.
		{"d02", "t1", "u2", 1, false, fmt.Sprintf(`{"name":"alpha","qty":2,"price":20,"active":false,"tags":["blue"],"items":[{"sku":"A1","qty":1}],"address":{"city":"paris"},"createdAt":%d,"note":null,"scores":[2,4]}`, mar(11, 0, 0))},
		// qty written 10.0; createdAt: the last millisecond of yesterday.
		{"d03", "t1", "u1", 7, false, fmt.Sprintf(`{"name":"Beta","qty":10.0,"price":15,"active":true,"tags":[],"items":[],"address":{"city":"London","zip":"SW1"},"createdAt":%d,"note":"second","scores":[3]}`, at(2026, time.March, 10, 23, 59, 59, 999))},
		// active is the string "true"; createdAt: the first millisecond of tomorrow.
		{"d04", "t2", "u3", 2, false, fmt.Sprintf(`{"name":"gamma","qty":-3,"price":0,"active":"true","tags":["green","red","blue"],"items":[{"sku":"C3","qty":7}],"address":{"city":"Berlin"},"createdAt":%d,"scores":[1,3,5]}`, mar(12, 0, 0))},
		// qty is the string "7", tags a string, address null; no owner.
		{"d05", "t2", "", 5, false, fmt.Sprintf(`{"name":"Delta","qty":"7","price":7.25,"active":false,"tags":"red","address":null,"createdAt":%d,"note":"third"}`, mar(9, 8, 0))},
		// createdAt: Sunday of last week.
		{"d06", "t1", "u2", 4, false, fmt.Sprintf(`{"name":"ALPHABET","qty":0,"price":3,"active":true,"tags":["Red"],"items":[{"sku":"a1","qty":2}],"address":{"city":"Paris","zip":"75002"},"createdAt":%d,"scores":[10]}`, mar(8, 20, 0))},
		// qty null, active missing; createdAt: the first millisecond of last week.
		{"d07", "t1", "u1", 1, false, fmt.Sprintf(`{"name":"epsilon","qty":null,"price":12,"tags":["blue","red"],"items":[{"sku":"B2","qty":1},{"sku":"A1","qty":9}],"address":{"city":"Rome"},"createdAt":%d,"note":"Fourth note"}`, mar(2, 0, 0))},
		// qty missing; createdAt: next week.
		{"d08", "t2", "u2", 9, false, fmt.Sprintf(`{"name":"Zeta","price":100,"active":true,"tags":["yellow"],"address":{"city":"Tokyo","zip":"100"},"createdAt":%d,"scores":[2,3]}`, mar(16, 10, 0))},
		// createdAt: the first millisecond of this month.
		{"d09", "t1", "u3", 2, false, fmt.Sprintf(`{"name":"eta","qty":5,"price":5,"active":false,"tags":["red"],"items":[{"sku":"B2","qty":3}],"address":{"city":"Paris"},"createdAt":%d,"note":"fifth"}`, mar(1, 0, 0))},
		// createdAt: the last hour of last month.
		{"d10", "t1", "u1", 6, false, fmt.Sprintf(`{"name":"Theta","qty":1.5,"price":1.5,"active":true,"tags":["blue"],"address":{"city":"Oslo"},"createdAt":%d,"note":"Sixth"}`, at(2026, time.February, 28, 23, 0, 0, 0))},
		// address missing; createdAt: the first millisecond of last month.
		{"d11", "t2", "u1", 3, false, fmt.Sprintf(`{"name":"iota","qty":100,"price":2.5,"active":true,"tags":["red","green"],"createdAt":%d,"scores":[4,5,6]}`, at(2026, time.February, 1, 0, 0, 0, 0))},
		// note starts with a non-ASCII capital.
		{"d12", "t1", "u2", 1, false, fmt.Sprintf(`{"name":"Kappa","qty":20,"price":40,"active":false,"tags":[],"address":{"city":"Madrid","zip":"28001"},"createdAt":%d,"note":"Élan seventh"}`, at(2025, time.December, 25, 12, 0, 0, 0))},
		// createdAt missing, note null, address missing.
		{"d13", "t1", "u1", 8, false, `{"name":"lambda","qty":3,"price":8,"active":true,"tags":["blue","green"],"note":null}`},
		// createdAt is a date string, not a number.
		{"d14", "t2", "u3", 2, false, `{"name":"Mu","qty":4,"price":6,"active":true,"tags":["red"],"address":{"city":"Paris"},"createdAt":"2026-03-11"}`},
		// createdAt: 01:00 today in UTC+8, which is still yesterday in UTC.
		{"d15", "t1", "u2", 1, false, fmt.Sprintf(`{"name":"nu","qty":10,"price":11,"active":false,"address":{"city":"Lyon","zip":"69001"},"createdAt":%d}`, mar(11, 1, 0))},
		// createdAt null.
		{"d16", "t2", "u1", 4, false, `{"name":"Xi","qty":-10,"price":4,"active":true,"createdAt":null,"tags":["blue","red","green"],"items":[{"sku":"A1","qty":3},{"sku":"C3","qty":1}]}`},
		// Deleted: matches many conditions, returned only when deletion is named.
		{"d17", "t1", "u1", 5, true, fmt.Sprintf(`{"name":"Alpha deleted","qty":10,"price":9,"active":true,"tags":["red"],"address":{"city":"Paris"},"createdAt":%d}`, mar(11, 9, 0))},
		{"d18", "t2", "u2", 2, true, fmt.Sprintf(`{"name":"omicron","qty":2,"price":50,"active":false,"tags":["blue"],"createdAt":%d}`, mar(10, 12, 0))},
		// name and note are empty strings; createdAt: Friday of this week.
		{"d19", "t1", "u3", 1, false, fmt.Sprintf(`{"name":"","qty":6,"price":6,"active":true,"tags":["RED","Blue"],"note":"","createdAt":%d}`, mar(13, 0, 0))},
		// createdAt: the last day of this month.
		{"d20", "t1", "u1", 2, false, fmt.Sprintf(`{"name":"pi","qty":7,"price":7,"active":true,"items":[{"sku":"B2","qty":5}],"address":{"city":"PARIS"},"createdAt":%d,"scores":[1,2,3,4]}`, mar(31, 23, 59))},
	}
}

// Dataset returns a fresh copy of the kit's data set: 20 snapshot
// documents, d01 to d20, of which d17 and d18 are deleted. Their top-level
// fields are those of a snapshot document: aggregateId, tenantId, ownerId,
// version, eventId, firstOperator, operator, firstEventTime, eventTime
// (Now minus version days), snapshotTime, deleted and state.
func Dataset() Data {
	first := at(2026, time.January, 1, 0, 0, 0, 0)
	d := Data{Now: now, Location: zone}
	for _, r := range rows() {
		operator := r.owner
		if operator == "" {
			operator = "system"
		}
		event := now.Add(-time.Duration(r.version) * 24 * time.Hour).UnixMilli()
		doc := fmt.Sprintf(`{"aggregateId":%q,"tenantId":%q,"ownerId":%q,"version":%d,"eventId":%q,"firstOperator":%q,"operator":%q,"firstEventTime":%d,"eventTime":%d,"snapshotTime":%d,"deleted":%t,"state":%s}`,
			r.id, r.tenant, r.owner, r.version, "e-"+r.id, operator, operator, first, event, event+1000, r.deleted, r.state)
		parsed, err := query.ParseDocument([]byte(doc), false)
		if err != nil {
			panic(fmt.Sprintf("querytest: data set document %s does not parse: %v", r.id, err))
		}
		d.JSON = append(d.JSON, json.RawMessage(doc))
		d.Documents = append(d.Documents, parsed)
	}
	return d
}
