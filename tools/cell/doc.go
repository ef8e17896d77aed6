// Package cell says what a code cell may do under the policy: its budget
// (BudgetFor), its network grant (GrantFor, ReadOnly) and what its code
// uses (Scan). The code tool and the skills both run cells and import it;
// neither imports the other.
package cell
