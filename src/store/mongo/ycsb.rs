//! YCSB's `mongodb` binding (`MongoDbClient`) as a [`YcsbStore`], in the target's private
//! database: collection `<table>`, one document per record, `{_id: key, field0: Binary, …}`
//! with the values as BSON Binary of the generic subtype (YCSB stores the byte arrays).
//!
//! The calls are YCSB's: `insertOne`; `find({_id: key})` with a projection of the asked
//! fields; `updateOne({_id: key}, {$set: {…}})`; `find({_id: {$gte: start}}).sort({_id:
//! 1}).limit(n)` with the projection; `deleteOne({_id: key})`. As in YCSB, a read or scan
//! keeps only a document's Binary values, so `_id` is not a field; an update or delete that
//! matched nothing is [`YcsbError::NotFound`] (YCSB's `NOT_FOUND`). `count` is
//! `countDocuments({})` and `clear` `deleteMany({})`. The collection is made by the first
//! insert (YCSB creates no index: `_id` has MongoDB's own).
//!
//! Stores share the target's client and its connection pool, as the core-data stores do
//! (YCSB's binding shares one `MongoClient` among its threads too).

use std::sync::Arc;

use mongodb::action::Action;
use mongodb::bson::raw::RawBinaryRef;
use mongodb::bson::spec::BinarySubtype;
use mongodb::bson::{doc, Binary, Bson, Document, RawBsonRef, RawDocument, RawDocumentBuf};
use mongodb::sync::{Client, Collection};

use super::base::backend;
use crate::store::backend::{no_ycsb, BackendError};
use crate::store::ycsb::{
    Binding, Record, Records, Setup, YcsbError, YcsbOpener, YcsbResult, YcsbStore,
};

/// Opens YCSB stores of `setup.binding` (only [`Binding::MongoDb`]) on collection
/// `setup.table` of `database`.
pub(crate) fn opener(
    client: &Client,
    database: &str,
    setup: &Setup,
) -> Result<YcsbOpener, BackendError> {
    if setup.binding != Binding::MongoDb {
        return Err(no_ycsb(setup.binding));
    }
    check_names(setup)?;
    let collection: Collection<RawDocumentBuf> = client.database(database).collection(&setup.table);
    Ok(Arc::new(move || {
        Ok(Box::new(MongoYcsbStore {
            collection: collection.clone(),
        }) as Box<dyn YcsbStore>)
    }))
}

/// A collection name MongoDB takes, and field names that are plain keys (no `$` first, no
/// `.`: a projection or `$set` would read them as operators or paths).
fn check_names(setup: &Setup) -> Result<(), BackendError> {
    if setup.table.is_empty() || setup.table.contains(['$', '\0']) {
        return Err(BackendError::Unsuitable(format!(
            "the YCSB table name {:?} is no MongoDB collection name: give one without $",
            setup.table
        )));
    }
    for field in &setup.fields {
        if field.is_empty() || field.starts_with('$') || field.contains('.') || field == "_id" {
            return Err(BackendError::Unsuitable(format!(
                "the YCSB field name {field:?} is no plain MongoDB key: give names without . \
                 or a leading $, other than _id"
            )));
        }
    }
    Ok(())
}

fn failed(e: mongodb::error::Error) -> YcsbError {
    YcsbError::Backend(backend(e).to_string())
}

fn binary(bytes: &[u8]) -> RawBinaryRef<'_> {
    RawBinaryRef {
        subtype: BinarySubtype::Generic,
        bytes,
    }
}

/// `{field: 1, …}`, or `None` for every field.
fn projection(fields: Option<&[String]>) -> Option<Document> {
    fields.map(|fields| fields.iter().map(|f| (f.clone(), Bson::Int32(1))).collect())
}

/// Fills `out` with the Binary values of `document`, in its order (YCSB's `fillMap`).
fn fill(out: &mut Record, document: &RawDocument) -> YcsbResult<()> {
    out.clear();
    for element in document {
        let (name, value) =
            element.map_err(|e| YcsbError::Backend(format!("mongodb: a stored record: {e}")))?;
        if let RawBsonRef::Binary(value) = value {
            out.push(name.as_bytes(), value.bytes);
        }
    }
    Ok(())
}

/// YCSB's MongoDB binding over one collection.
struct MongoYcsbStore {
    collection: Collection<RawDocumentBuf>,
}

impl YcsbStore for MongoYcsbStore {
    fn insert(&mut self, key: &str, values: &[(String, Vec<u8>)]) -> YcsbResult<()> {
        let mut document = RawDocumentBuf::new();
        document.append("_id", key);
        for (field, value) in values {
            document.append_ref(field, binary(value));
        }
        self.collection.insert_one(document).run().map_err(failed)?;
        Ok(())
    }

    fn read(&mut self, key: &str, fields: Option<&[String]>, out: &mut Record) -> YcsbResult<()> {
        let found = self
            .collection
            .find_one(doc! { "_id": key })
            .optional(projection(fields), |find, p| find.projection(p))
            .run()
            .map_err(failed)?
            .ok_or_else(|| YcsbError::NotFound(key.to_string()))?;
        fill(out, &found)
    }

    fn update(&mut self, key: &str, values: &[(String, Vec<u8>)]) -> YcsbResult<()> {
        let set: Document = values
            .iter()
            .map(|(field, value)| {
                let value = Binary {
                    subtype: BinarySubtype::Generic,
                    bytes: value.clone(),
                };
                (field.clone(), Bson::Binary(value))
            })
            .collect();
        let result = self
            .collection
            .update_one(doc! { "_id": key }, doc! { "$set": set })
            .run()
            .map_err(failed)?;
        match result.matched_count {
            0 => Err(YcsbError::NotFound(key.to_string())),
            _ => Ok(()),
        }
    }

    fn scan(
        &mut self,
        start: &str,
        count: usize,
        fields: Option<&[String]>,
        out: &mut Records,
    ) -> YcsbResult<()> {
        out.clear();
        // MongoDB reads `limit(0)` as no limit.
        if count == 0 {
            return Ok(());
        }
        let cursor = self
            .collection
            .find(doc! { "_id": { "$gte": start } })
            .sort(doc! { "_id": 1 })
            .limit(i64::try_from(count).unwrap_or(i64::MAX))
            .optional(projection(fields), |find, p| find.projection(p))
            .run()
            .map_err(failed)?;
        for found in cursor {
            let found = found.map_err(failed)?;
            let key = found
                .get_str("_id")
                .map_err(|e| YcsbError::Backend(format!("mongodb: a stored record: {e}")))?;
            fill(out.next(key.as_bytes()), &found)?;
        }
        Ok(())
    }

    fn delete(&mut self, key: &str) -> YcsbResult<()> {
        let result = self
            .collection
            .delete_one(doc! { "_id": key })
            .run()
            .map_err(failed)?;
        match result.deleted_count {
            0 => Err(YcsbError::NotFound(key.to_string())),
            _ => Ok(()),
        }
    }

    fn count(&mut self) -> YcsbResult<u64> {
        self.collection
            .count_documents(doc! {})
            .run()
            .map_err(failed)
    }

    fn clear(&mut self) -> YcsbResult<()> {
        self.collection.delete_many(doc! {}).run().map_err(failed)?;
        Ok(())
    }
}
