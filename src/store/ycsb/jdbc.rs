//! YCSB's JDBC table as SQL text (`JdbcDBClient`'s `DefaultDBFlavor` statements and
//! `JdbcDBCreateTable`'s table), with numbered parameters, and what a store needs to turn a
//! `SELECT *` row into a [`Record`]: shared by PostgreSQL (`$N`) and SQLite (`?N`).

use crate::store::backend::BackendError;
use crate::store::ycsb::{Record, Setup, YcsbError, YcsbResult};

/// JDBC's key column (`JdbcDBClient.PRIMARY_KEY`), also PostgreNoSQL's.
pub(crate) const KEY_COLUMN: &str = "YCSB_KEY";
/// PostgreNoSQL's document column, which no field may be named.
pub(crate) const VALUE_COLUMN: &str = "YCSB_VALUE";

/// A value as the text column or JSON string holds it.
pub(crate) fn text<'a>(field: &str, value: &'a [u8]) -> YcsbResult<&'a str> {
    std::str::from_utf8(value).map_err(|e| {
        YcsbError::Backend(format!(
            "the value of {field} is not UTF-8 text ({e}): the SQL bindings store values as \
             text, as YCSB's printable-ASCII values are"
        ))
    })
}

/// YCSB's JDBC table and its statements as SQL text, for one [`Setup`]; parameters are
/// numbered with `mark` (`$1` for PostgreSQL, `?1` for SQLite).
pub(crate) struct JdbcSql {
    table: String,
    /// The field names, in setup order.
    fields: Vec<String>,
    /// Each field's column: its name uppercased.
    columns: Vec<String>,
    mark: char,
}

impl JdbcSql {
    /// Checks that the table and the fields are SQL identifiers, distinct as columns.
    pub(crate) fn new(setup: &Setup, mark: char) -> Result<JdbcSql, BackendError> {
        let sql = JdbcSql {
            table: identifier("table", &setup.table)?.to_string(),
            fields: setup.fields.clone(),
            columns: columns(&setup.fields)?,
            mark,
        };
        Ok(sql)
    }

    /// `CREATE TABLE IF NOT EXISTS <table> (YCSB_KEY VARCHAR PRIMARY KEY, FIELD0 TEXT, …)`.
    pub(crate) fn create_table(&self) -> String {
        let mut sql = format!(
            "CREATE TABLE IF NOT EXISTS {} ({KEY_COLUMN} VARCHAR PRIMARY KEY",
            self.table
        );
        for column in &self.columns {
            sql.push_str(&format!(", {column} TEXT"));
        }
        sql.push(')');
        sql
    }

    /// `INSERT INTO <table> (YCSB_KEY, FIELDa, …) VALUES ($1, $2, …)` for the fields at
    /// `fields` (indexes into the setup's fields), in that order.
    pub(crate) fn insert(&self, fields: &[usize]) -> String {
        let mut names = KEY_COLUMN.to_string();
        let mut marks = format!("{}1", self.mark);
        for (n, &f) in fields.iter().enumerate() {
            names.push_str(&format!(", {}", self.columns[f]));
            marks.push_str(&format!(", {}{}", self.mark, n + 2));
        }
        format!("INSERT INTO {} ({names}) VALUES ({marks})", self.table)
    }

    /// [`Self::insert`] of every field.
    pub(crate) fn insert_all(&self) -> String {
        self.insert(&(0..self.fields.len()).collect::<Vec<_>>())
    }

    /// `UPDATE <table> SET FIELDa = $1, … WHERE YCSB_KEY = $n`.
    pub(crate) fn update(&self, fields: &[usize]) -> String {
        let set: Vec<String> = fields
            .iter()
            .enumerate()
            .map(|(n, &f)| format!("{} = {}{}", self.columns[f], self.mark, n + 1))
            .collect();
        format!(
            "UPDATE {} SET {} WHERE {KEY_COLUMN} = {}{}",
            self.table,
            set.join(", "),
            self.mark,
            fields.len() + 1
        )
    }

    /// `SELECT * FROM <table> WHERE YCSB_KEY = $1`: YCSB reads every column whatever it asks.
    pub(crate) fn read(&self) -> String {
        format!(
            "SELECT * FROM {} WHERE {KEY_COLUMN} = {}1",
            self.table, self.mark
        )
    }

    /// `SELECT * FROM <table> WHERE YCSB_KEY >= $1 ORDER BY YCSB_KEY LIMIT $2`.
    pub(crate) fn scan(&self) -> String {
        format!(
            "SELECT * FROM {} WHERE {KEY_COLUMN} >= {m}1 ORDER BY {KEY_COLUMN} LIMIT {m}2",
            self.table,
            m = self.mark
        )
    }

    /// `DELETE FROM <table> WHERE YCSB_KEY = $1`.
    pub(crate) fn delete(&self) -> String {
        delete_sql(&self.table, self.mark)
    }

    /// `SELECT count(*) FROM <table>`.
    pub(crate) fn count(&self) -> String {
        count_sql(&self.table)
    }

    /// The table's name.
    pub(crate) fn table(&self) -> &str {
        &self.table
    }

    /// The setup's field names.
    pub(crate) fn fields(&self) -> &[String] {
        &self.fields
    }

    /// For each column of a `SELECT *` named `names` (as the server spells them), the field
    /// it holds (`None` for the key).
    pub(crate) fn fields_of_columns<'a>(
        &self,
        names: impl Iterator<Item = &'a str>,
    ) -> Vec<Option<usize>> {
        names
            .map(|name| {
                self.columns
                    .iter()
                    .position(|c| c.eq_ignore_ascii_case(name))
            })
            .collect()
    }
}

/// `name` when it is a plain SQL identifier (letters, digits, `_`, not first a digit), which
/// every statement can name unquoted.
pub(crate) fn identifier<'a>(what: &str, name: &'a str) -> Result<&'a str, BackendError> {
    let mut chars = name.chars();
    let plain = chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_');
    if plain {
        Ok(name)
    } else {
        Err(BackendError::Unsuitable(format!(
            "the YCSB {what} name {name:?} is not a plain SQL identifier: the SQL bindings \
             name it unquoted, as YCSB's JDBC does; use letters, digits and _"
        )))
    }
}

/// The fields' columns (uppercased names), checked as identifiers and distinct.
pub(crate) fn columns(fields: &[String]) -> Result<Vec<String>, BackendError> {
    let mut columns: Vec<String> = Vec::with_capacity(fields.len());
    for field in fields {
        let column = identifier("field", field)?.to_ascii_uppercase();
        if column.eq_ignore_ascii_case(KEY_COLUMN)
            || column.eq_ignore_ascii_case(VALUE_COLUMN)
            || columns.contains(&column)
        {
            return Err(BackendError::Unsuitable(format!(
                "the YCSB field {field:?} names column {column} twice: give fields whose \
                 names differ in more than case, and not {KEY_COLUMN}"
            )));
        }
        columns.push(column);
    }
    Ok(columns)
}

/// The index of field `name` among `fields`.
pub(crate) fn field_index(fields: &[String], name: &str) -> YcsbResult<usize> {
    fields.iter().position(|f| f == name).ok_or_else(|| {
        YcsbError::Backend(format!(
            "no field {name} in the table (its fields: {})",
            fields.join(", ")
        ))
    })
}

/// Fills `out` with the indexes of the fields named in `values`, in their order.
pub(crate) fn value_fields(
    fields: &[String],
    values: &[(String, Vec<u8>)],
    out: &mut Vec<usize>,
) -> YcsbResult<()> {
    out.clear();
    for (name, _) in values {
        out.push(field_index(fields, name)?);
    }
    Ok(())
}

/// Fills `out` from one `SELECT *` row: every field (`asked` is `None`) in column order, or
/// the asked ones in their order. `value(c)` is column `c`'s text; a NULL column (a field
/// never set) is left out.
pub(crate) fn fill_from_columns<'r>(
    out: &mut Record,
    fields: &[String],
    column_field: &[Option<usize>],
    field_column: &[Option<usize>],
    asked: Option<&[String]>,
    mut value: impl FnMut(usize) -> YcsbResult<Option<&'r str>>,
) -> YcsbResult<()> {
    out.clear();
    match asked {
        None => {
            for (c, field) in column_field.iter().enumerate() {
                if let Some(f) = field {
                    if let Some(v) = value(c)? {
                        out.push(fields[*f].as_bytes(), v.as_bytes());
                    }
                }
            }
        }
        Some(asked) => {
            for name in asked {
                let f = field_index(fields, name)?;
                let Some(c) = field_column[f] else {
                    return Err(YcsbError::Backend(format!(
                        "the table has no column for {name}"
                    )));
                };
                if let Some(v) = value(c)? {
                    out.push(name.as_bytes(), v.as_bytes());
                }
            }
        }
    }
    Ok(())
}

/// The inverse of a column → field map: each field's column.
pub(crate) fn invert(column_field: &[Option<usize>], fields: usize) -> Vec<Option<usize>> {
    let mut field_column = vec![None; fields];
    for (c, f) in column_field.iter().enumerate() {
        if let Some(f) = f {
            field_column[*f] = Some(c);
        }
    }
    field_column
}

/// `DELETE FROM <table> WHERE YCSB_KEY = $1`, every binding's delete.
pub(crate) fn delete_sql(table: &str, mark: char) -> String {
    format!("DELETE FROM {table} WHERE {KEY_COLUMN} = {mark}1")
}

/// `SELECT count(*) FROM <table>`.
pub(crate) fn count_sql(table: &str) -> String {
    format!("SELECT count(*) FROM {table}")
}

/// Not found when no row changed, as YCSB's MongoDB binding answers (its JDBC one says
/// `UNEXPECTED_STATE`).
pub(crate) fn changed(key: &str, rows: u64) -> YcsbResult<()> {
    match rows {
        0 => Err(YcsbError::NotFound(key.to_string())),
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::ycsb::Binding;

    fn setup(fields: &[&str]) -> Setup {
        Setup {
            binding: Binding::Jdbc,
            table: "usertable".to_string(),
            fields: fields.iter().map(|f| f.to_string()).collect(),
        }
    }

    #[test]
    fn jdbc_statements_are_ycsbs_with_numbered_parameters() {
        let sql = JdbcSql::new(&setup(&["field0", "field1", "field2"]), '$').unwrap();
        assert_eq!(
            sql.create_table(),
            "CREATE TABLE IF NOT EXISTS usertable (YCSB_KEY VARCHAR PRIMARY KEY, \
             FIELD0 TEXT, FIELD1 TEXT, FIELD2 TEXT)"
        );
        assert_eq!(
            sql.insert(&[2, 0]),
            "INSERT INTO usertable (YCSB_KEY, FIELD2, FIELD0) VALUES ($1, $2, $3)"
        );
        assert_eq!(
            sql.update(&[1, 2]),
            "UPDATE usertable SET FIELD1 = $1, FIELD2 = $2 WHERE YCSB_KEY = $3"
        );
        assert_eq!(sql.read(), "SELECT * FROM usertable WHERE YCSB_KEY = $1");
        let sqlite = JdbcSql::new(&setup(&["field0"]), '?').unwrap();
        assert_eq!(
            sqlite.scan(),
            "SELECT * FROM usertable WHERE YCSB_KEY >= ?1 ORDER BY YCSB_KEY LIMIT ?2"
        );
        assert_eq!(sqlite.delete(), "DELETE FROM usertable WHERE YCSB_KEY = ?1");
    }

    #[test]
    fn names_that_are_not_plain_identifiers_are_refused() {
        assert!(JdbcSql::new(&setup(&["field0; DROP TABLE x"]), '$').is_err());
        assert!(JdbcSql::new(&setup(&["0field"]), '$').is_err());
        assert!(JdbcSql::new(&setup(&["f", "F"]), '$').is_err());
        assert!(JdbcSql::new(&setup(&["ycsb_key"]), '$').is_err());
        let mut bad_table = setup(&["field0"]);
        bad_table.table = "user table".to_string();
        assert!(JdbcSql::new(&bad_table, '$').is_err());
    }
}
