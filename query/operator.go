package query

import (
	"fmt"
	"strings"
)

// Operator names what a Condition tests. Its string value is the wire name
// used in the JSON form (upper snake case, as in the reference framework);
// parsing ignores case.
type Operator string

// Logical operators combine the Children of a condition.
const (
	// OpAnd matches when every child matches; with no children it matches
	// every document.
	OpAnd Operator = "AND"
	// OpOr matches when at least one child matches; with no children it
	// matches nothing.
	OpOr Operator = "OR"
	// OpNor matches when no child matches; with no children it matches every
	// document.
	OpNor Operator = "NOR"
	// OpAll matches every document. The zero Condition (empty operator) is
	// OpAll.
	OpAll Operator = "ALL"
)

// Identity operators name the standard document fields (see Fields). A
// Planner lowers them to field operators.
const (
	// OpID matches the document whose ID field equals Value (a string).
	OpID Operator = "ID"
	// OpIDs matches documents whose ID field is one of Value (strings).
	OpIDs Operator = "IDS"
	// OpAggregateID matches the document whose aggregate ID equals Value.
	OpAggregateID Operator = "AGGREGATE_ID"
	// OpAggregateIDs matches documents whose aggregate ID is one of Value.
	OpAggregateIDs Operator = "AGGREGATE_IDS"
	// OpTenant matches documents of the tenant Value.
	OpTenant Operator = "TENANT_ID"
	// OpOwner matches documents of the owner Value.
	OpOwner Operator = "OWNER_ID"
	// OpDeleted selects by deletion: Value is "ACTIVE", "DELETED" or "ALL"
	// (see DeletionState). A condition that names deletion anywhere turns
	// off the default exclusion of deleted documents.
	OpDeleted Operator = "DELETED"
)

// Comparison operators compare the field with Value. See the package
// documentation for how values of different JSON types compare.
const (
	// OpEq matches when the field equals Value (a string, number or bool).
	OpEq Operator = "EQ"
	// OpNe matches exactly when OpEq does not, including a missing field.
	OpNe Operator = "NE"
	// OpGt matches when the field is greater than Value (a number or string).
	OpGt Operator = "GT"
	// OpGte matches when the field is greater than or equal to Value.
	OpGte Operator = "GTE"
	// OpLt matches when the field is less than Value.
	OpLt Operator = "LT"
	// OpLte matches when the field is less than or equal to Value.
	OpLte Operator = "LTE"
	// OpBetween matches when Value[0] <= field <= Value[1]; both bounds are
	// numbers or both are strings.
	OpBetween Operator = "BETWEEN"
)

// Set and array operators.
const (
	// OpIn matches when the field equals one of Value (a non-empty list of
	// scalars).
	OpIn Operator = "IN"
	// OpNotIn matches exactly when OpIn does not, including a missing field.
	OpNotIn Operator = "NOT_IN"
	// OpAllIn matches when the field is an array holding every one of Value.
	OpAllIn Operator = "ALL_IN"
	// OpElemMatch matches when the field is an array with at least one
	// element that matches every child. Inside the children, field paths
	// are relative to the element; the empty path is the element itself.
	OpElemMatch Operator = "ELEM_MATCH"
)

// String operators. With Options.IgnoreCase they fold ASCII letters only,
// so that every backend folds the same way.
const (
	// OpContains matches when the field is a string containing Value.
	OpContains Operator = "CONTAINS"
	// OpStartsWith matches when the field is a string starting with Value.
	OpStartsWith Operator = "STARTS_WITH"
	// OpEndsWith matches when the field is a string ending with Value.
	OpEndsWith Operator = "ENDS_WITH"
)

// Presence and type operators.
const (
	// OpNull matches when the field is missing or JSON null.
	OpNull Operator = "NULL"
	// OpNotNull matches when the field is present and not JSON null.
	OpNotNull Operator = "NOT_NULL"
	// OpTrue matches when the field is JSON true.
	OpTrue Operator = "TRUE"
	// OpFalse matches when the field is JSON false.
	OpFalse Operator = "FALSE"
	// OpExists matches when the field is present (even if null); with Value
	// false, when it is missing. A nil Value means true.
	OpExists Operator = "EXISTS"
)

// Date-relative operators match a field holding a time as epoch
// milliseconds (a JSON number) against calendar ranges around the
// Planner's clock, in the Planner's location or the condition's
// Options.ZoneID. Ranges are half-open: [start, end). Weeks start on
// Monday. A Planner lowers them to numeric comparisons, so every backend
// sees the same bounds.
const (
	// OpToday matches times in the current day.
	OpToday Operator = "TODAY"
	// OpYesterday matches times in the previous day.
	OpYesterday Operator = "YESTERDAY"
	// OpTomorrow matches times in the next day.
	OpTomorrow Operator = "TOMORROW"
	// OpBeforeToday matches times before the start of the current day.
	OpBeforeToday Operator = "BEFORE_TODAY"
	// OpThisWeek matches times in the current week (Monday to Sunday).
	OpThisWeek Operator = "THIS_WEEK"
	// OpNextWeek matches times in the next week.
	OpNextWeek Operator = "NEXT_WEEK"
	// OpLastWeek matches times in the previous week.
	OpLastWeek Operator = "LAST_WEEK"
	// OpThisMonth matches times in the current calendar month.
	OpThisMonth Operator = "THIS_MONTH"
	// OpLastMonth matches times in the previous calendar month.
	OpLastMonth Operator = "LAST_MONTH"
	// OpRecentDays matches times in the last Value days, today included:
	// 3 means the day before yesterday, yesterday and today.
	OpRecentDays Operator = "RECENT_DAYS"
	// OpEarlierDays matches times before the last Value days: exactly the
	// times before OpRecentDays' range for the same Value.
	OpEarlierDays Operator = "EARLIER_DAYS"
)

// opShape describes what an operator takes, so that validation is one table
// instead of a switch per property.
type opShape uint8

const (
	shapeLogical    opShape = iota + 1 // children, no field, no value
	shapeNone                          // no field, no value (ALL)
	shapeIdentity                      // no field, a string value
	shapeIdentities                    // no field, a non-empty list of strings
	shapeDeleted                       // no field, a deletion state
	shapeScalar                        // field, a string, number or bool
	shapeOrdered                       // field, a string or number
	shapeRange                         // field, two strings or two numbers
	shapeList                          // field, a non-empty list of scalars
	shapeElem                          // field, children, no value
	shapeString                        // field, a string
	shapeFlag                          // field, no value
	shapeExists                        // field, a bool or nothing
	shapeDate                          // field, no value
	shapeDays                          // field, a whole number of days >= 1
)

var shapes = map[Operator]opShape{
	OpAnd: shapeLogical, OpOr: shapeLogical, OpNor: shapeLogical, OpAll: shapeNone,
	OpID: shapeIdentity, OpAggregateID: shapeIdentity, OpTenant: shapeIdentity, OpOwner: shapeIdentity,
	OpIDs: shapeIdentities, OpAggregateIDs: shapeIdentities,
	OpDeleted: shapeDeleted,
	OpEq:      shapeScalar, OpNe: shapeScalar,
	OpGt: shapeOrdered, OpGte: shapeOrdered, OpLt: shapeOrdered, OpLte: shapeOrdered,
	OpBetween: shapeRange,
	OpIn:      shapeList, OpNotIn: shapeList, OpAllIn: shapeList,
	OpElemMatch: shapeElem,
	OpContains:  shapeString, OpStartsWith: shapeString, OpEndsWith: shapeString,
	OpNull: shapeFlag, OpNotNull: shapeFlag, OpTrue: shapeFlag, OpFalse: shapeFlag,
	OpExists: shapeExists,
	OpToday:  shapeDate, OpYesterday: shapeDate, OpTomorrow: shapeDate, OpBeforeToday: shapeDate,
	OpThisWeek: shapeDate, OpNextWeek: shapeDate, OpLastWeek: shapeDate,
	OpThisMonth: shapeDate, OpLastMonth: shapeDate,
	OpRecentDays: shapeDays, OpEarlierDays: shapeDays,
}

// Operators lists every operator of the language, in documentation order.
func Operators() []Operator {
	return []Operator{
		OpAnd, OpOr, OpNor, OpAll,
		OpID, OpIDs, OpAggregateID, OpAggregateIDs, OpTenant, OpOwner, OpDeleted,
		OpEq, OpNe, OpGt, OpGte, OpLt, OpLte, OpBetween,
		OpIn, OpNotIn, OpAllIn, OpElemMatch,
		OpContains, OpStartsWith, OpEndsWith,
		OpNull, OpNotNull, OpTrue, OpFalse, OpExists,
		OpToday, OpYesterday, OpTomorrow, OpBeforeToday,
		OpThisWeek, OpNextWeek, OpLastWeek, OpThisMonth, OpLastMonth,
		OpRecentDays, OpEarlierDays,
	}
}

// CoreOperators lists the operators a Plan's condition is made of after a
// Planner has lowered identities, deletion and dates: what an evaluator or
// SQL translator must implement.
func CoreOperators() []Operator {
	return []Operator{
		OpAnd, OpOr, OpNor, OpAll,
		OpEq, OpNe, OpGt, OpGte, OpLt, OpLte, OpBetween,
		OpIn, OpNotIn, OpAllIn, OpElemMatch,
		OpContains, OpStartsWith, OpEndsWith,
		OpNull, OpNotNull, OpTrue, OpFalse, OpExists,
	}
}

// Valid reports whether op is an operator of the language. The empty
// operator is valid and means OpAll.
func (op Operator) Valid() bool {
	if op == "" {
		return true
	}
	_, ok := shapes[op]
	return ok
}

// IsCore reports whether op may appear in a lowered condition.
func (op Operator) IsCore() bool {
	switch shapes[op] {
	case shapeIdentity, shapeIdentities, shapeDeleted, shapeDate, shapeDays:
		return false
	}
	return op.Valid()
}

// takesField reports whether op applies to a field path.
func (op Operator) takesField() bool {
	switch shapes[op] {
	case shapeLogical, shapeNone, shapeIdentity, shapeIdentities, shapeDeleted:
		return false
	}
	return op != ""
}

// ParseOperator returns the operator named s, ignoring case.
func ParseOperator(s string) (Operator, error) {
	op := Operator(strings.ToUpper(s))
	if _, ok := shapes[op]; !ok {
		return "", illegal(fmt.Sprintf("unknown query operator %q", s))
	}
	return op, nil
}

// DeletionState is the value of an OpDeleted condition.
type DeletionState string

// The deletion states.
const (
	// Active selects documents that are not deleted (the default).
	Active DeletionState = "ACTIVE"
	// DeletedOnly selects deleted documents only.
	DeletedOnly DeletionState = "DELETED"
	// AnyDeletion selects documents whether deleted or not.
	AnyDeletion DeletionState = "ALL"
)

func parseDeletionState(v any) (DeletionState, error) {
	s, ok := v.(string)
	if ok {
		switch d := DeletionState(strings.ToUpper(s)); d {
		case Active, DeletedOnly, AnyDeletion:
			return d, nil
		}
	}
	return "", illegal(fmt.Sprintf("DELETED value %v: want one of ACTIVE, DELETED, ALL", describe(v)))
}
