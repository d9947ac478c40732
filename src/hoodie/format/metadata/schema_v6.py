"""The ``HoodieMetadataRecord`` Avro schema hoodie writes into table-version-6 metadata tables.

Derived from the schema Hudi 1.0 stores in its metadata HFiles (file info ``schema`` of a Java-written
v8 fixture) by removing what table version 6 (Hudi 0.14/0.15) does not have: the five ``_hoodie_*``
meta fields (v6 metadata tables set ``hoodie.populate.meta.fields=false``) and
``SecondaryIndexMetadata`` (Hudi 1.x). Readers decode with the writer schema stored beside the data
(the HFile's ``schema`` file info, the log block's ``SCHEMA`` header) and resolve it against their own
by field name, so the nested record types of the other partitions only need matching names.
"""

SCHEMA_JSON_V6 = (
    '{"type":"record","name":"HoodieMetadataRecord","namespace":"org.apache.hudi.avro.model","doc":"A'
    ' record saved within the Metadata Table","fields":[{"name":"key","type":{"type":"string","avro.j'
    'ava.string":"String"}},{"name":"type","type":"int","doc":"Type of the metadata record"},{"name":'
    '"filesystemMetadata","type":["null",{"type":"map","values":{"type":"record","name":"HoodieMetada'
    'taFileInfo","fields":[{"name":"size","type":"long","doc":"Size of the file"},{"name":"isDeleted"'
    ',"type":"boolean","doc":"True if this file has been deleted"}]},"avro.java.string":"String"}],"d'
    'oc":"Contains information about partitions and files within the dataset"},{"name":"BloomFilterMe'
    'tadata","type":["null",{"type":"record","name":"HoodieMetadataBloomFilter","doc":"Data file bloo'
    'm filter details","fields":[{"name":"type","type":{"type":"string","avro.java.string":"String"},'
    '"doc":"Bloom filter type code"},{"name":"timestamp","type":{"type":"string","avro.java.string":"'
    'String"},"doc":"Instant timestamp when this metadata was created/updated"},{"name":"bloomFilter"'
    ',"type":"bytes","doc":"Bloom filter binary byte array"},{"name":"isDeleted","type":"boolean","do'
    'c":"Bloom filter entry valid/deleted flag"}]}],"doc":"Metadata Index of bloom filters for all da'
    'ta files in the user table","default":null},{"name":"ColumnStatsMetadata","type":["null",{"type"'
    ':"record","name":"HoodieMetadataColumnStats","doc":"Data file column statistics","fields":[{"nam'
    'e":"fileName","type":["null",{"type":"string","avro.java.string":"String"}],"doc":"File name for'
    ' which this column statistics applies","default":null},{"name":"columnName","type":["null",{"typ'
    'e":"string","avro.java.string":"String"}],"doc":"Column name for which this column statistics ap'
    'plies","default":null},{"name":"minValue","type":["null",{"type":"record","name":"BooleanWrapper'
    '","doc":"A record wrapping boolean type to be able to be used it w/in Avro\'s Union","fields":[{"'
    'name":"value","type":"boolean"}]},{"type":"record","name":"IntWrapper","doc":"A record wrapping '
    'int type to be able to be used it w/in Avro\'s Union","fields":[{"name":"value","type":"int"}]},{'
    '"type":"record","name":"LongWrapper","doc":"A record wrapping long type to be able to be used it'
    ' w/in Avro\'s Union","fields":[{"name":"value","type":"long"}]},{"type":"record","name":"FloatWra'
    'pper","doc":"A record wrapping float type to be able to be used it w/in Avro\'s Union","fields":['
    '{"name":"value","type":"float"}]},{"type":"record","name":"DoubleWrapper","doc":"A record wrappi'
    'ng double type to be able to be used it w/in Avro\'s Union","fields":[{"name":"value","type":"dou'
    'ble"}]},{"type":"record","name":"BytesWrapper","doc":"A record wrapping bytes type to be able to'
    ' be used it w/in Avro\'s Union","fields":[{"name":"value","type":"bytes"}]},{"type":"record","nam'
    'e":"StringWrapper","doc":"A record wrapping string type to be able to be used it w/in Avro\'s Uni'
    'on","fields":[{"name":"value","type":{"type":"string","avro.java.string":"String"}}]},{"type":"r'
    'ecord","name":"DateWrapper","doc":"A record wrapping Date logical type to be able to be used it '
    'w/in Avro\'s Union","fields":[{"name":"value","type":"int"}]},{"type":"record","name":"DecimalWra'
    'pper","doc":"A record wrapping Decimal logical type to be able to be used it w/in Avro\'s Union",'
    '"fields":[{"name":"value","type":{"type":"bytes","logicalType":"decimal","precision":30,"scale":'
    '15}}]},{"type":"record","name":"TimeMicrosWrapper","doc":"A record wrapping Time-micros logical '
    'type to be able to be used it w/in Avro\'s Union","fields":[{"name":"value","type":{"type":"long"'
    ',"logicalType":"time-micros"}}]},{"type":"record","name":"TimestampMicrosWrapper","doc":"A recor'
    'd wrapping Timestamp-micros logical type to be able to be used it w/in Avro\'s Union","fields":[{'
    '"name":"value","type":"long"}]},{"type":"record","name":"LocalDateWrapper","doc":"A record wrapp'
    'ing Local Date type to be able to be used it w/in Avro\'s Union","fields":[{"name":"value","type"'
    ':"int"}]}],"doc":"Minimum value in the range. Based on user data table schema, we can convert th'
    'is to appropriate type","default":null},{"name":"maxValue","type":["null","BooleanWrapper","IntW'
    'rapper","LongWrapper","FloatWrapper","DoubleWrapper","BytesWrapper","StringWrapper","DateWrapper'
    '","DecimalWrapper","TimeMicrosWrapper","TimestampMicrosWrapper","LocalDateWrapper"],"doc":"Maxim'
    'um value in the range. Based on user data table schema, we can convert it to appropriate type","'
    'default":null},{"name":"valueCount","type":["null","long"],"doc":"Total count of values","defaul'
    't":null},{"name":"nullCount","type":["null","long"],"doc":"Total count of null values","default"'
    ':null},{"name":"totalSize","type":["null","long"],"doc":"Total storage size on disk","default":n'
    'ull},{"name":"totalUncompressedSize","type":["null","long"],"doc":"Total uncompressed storage si'
    'ze on disk","default":null},{"name":"isDeleted","type":"boolean","doc":"Column range entry valid'
    '/deleted flag"},{"name":"isTightBound","type":"boolean","doc":"Whether the min/max range of a co'
    'lumn is tight bound or not","default":false}]}],"doc":"Metadata Index of column statistics for a'
    'll data files in the user table","default":null},{"name":"recordIndexMetadata","type":["null",{"'
    'type":"record","name":"HoodieRecordIndexInfo","fields":[{"name":"partitionName","type":["null",{'
    '"type":"string","avro.java.string":"String"}],"doc":"Refers to the partition name the record bel'
    'ongs to","default":null},{"name":"fileIdHighBits","type":["null","long"],"doc":"Refers to high 6'
    '4 bits if the fileId is based on UUID format. \\nA UUID based fileId is stored as 3 pieces in RLI'
    ' (fileIdHighBits, fileIdLowBits and fileIndex). \\nFileID format is {UUID}-{fileIndex}.","default'
    '":null},{"name":"fileIdLowBits","type":["null","long"],"doc":"Refers to low 64 bits if the fileI'
    'd is based on UUID format. \\nA UUID based fileId is stored as 3 pieces in RLI (fileIdHighBits, f'
    'ileIdLowBits and fileIndex). \\nFileID format is {UUID}-{fileIndex}.","default":null},{"name":"fi'
    'leIndex","type":["null","int"],"doc":"Index representing file index which is used to re-construc'
    't UUID based fileID. Applicable when the fileId is based on UUID format. \\nA UUID based fileId i'
    's stored as 3 pieces in RLI (fileIdHighBits, fileIdLowBits and fileIndex). \\nFileID format is {U'
    'UID}-{fileIndex}.","default":null},{"name":"fileId","type":["null",{"type":"string","avro.java.s'
    'tring":"String"}],"doc":"Represents fileId of the location where record belongs to. When the enc'
    'oding is 1, fileID is stored in raw string format.","default":null},{"name":"instantTime","type"'
    ':["null","long"],"doc":"Epoch time in millisecond representing the commit time at which record w'
    'as added","default":null},{"name":"fileIdEncoding","type":"int","doc":"Represents fileId encodin'
    'g. Possible values are 0 and 1. O represents UUID based fileID, and 1 represents raw string form'
    'at of the fileId. \\nWhen the encoding is 0, reader can deduce fileID from fileIdLowBits, fileIdH'
    'ighBits and fileIndex.","default":0},{"name":"position","type":["null","long"],"doc":"Represents'
    ' position of record within a file group for easier access. It will be used for index lookup.","d'
    'efault":null}]}],"doc":"Metadata Index that contains information about record keys and their loc'
    'ation in the dataset","default":null}]}'
)


def _schema_v8() -> str:
    """Hudi 1.0's ``HoodieMetadataRecord`` (table versions 8/9): the version-6 fields between the five
    nullable meta fields and ``SecondaryIndexMetadata``, as the v8 fixture's HFiles store it."""
    import json

    schema = json.loads(SCHEMA_JSON_V6)
    meta = [{"name": n, "type": ["null", "string"], "doc": "", "default": None}
            for n in ("_hoodie_commit_time", "_hoodie_commit_seqno", "_hoodie_record_key",
                      "_hoodie_partition_path", "_hoodie_file_name")]
    secondary = {
        "name": "SecondaryIndexMetadata",
        "type": ["null", {"type": "record", "name": "HoodieSecondaryIndexInfo", "fields": [
            {"name": "isDeleted", "type": "boolean", "doc": "True if this entry has been deleted"}]}],
        "doc": "Metadata Index that contains information about secondary keys and the corresponding record keys "
               "in the dataset",
        "default": None,
    }
    schema["fields"] = meta + schema["fields"] + [secondary]
    return json.dumps(schema, separators=(",", ":"))


SCHEMA_JSON_V8 = _schema_v8()


def _schema_v9() -> str:
    """Hudi 1.1's ``HoodieMetadataRecord`` (table version 9): version 8's, with column statistics that
    may hold arrays (``ArrayWrapper``) and carry their value type (``valueType``), as the v9 fixtures'
    HFiles store it. hudi-rs reconciles the schemas of a file slice's blocks, so a log block written
    into a version-9 metadata table must carry this one."""
    import json

    schema = json.loads(SCHEMA_JSON_V8)
    stats = next(f for f in schema["fields"] if f["name"] == "ColumnStatsMetadata")["type"][1]
    wrappers = [t if isinstance(t, str) else t["name"] for t in
                next(f for f in stats["fields"] if f["name"] == "minValue")["type"]]
    array_wrapper = {
        "type": "record", "name": "ArrayWrapper", "doc": "A record containing a list of wrapped values.",
        "fields": [{"name": "wrappedValues", "type": ["null", {"type": "array", "items": wrappers}],
                    "doc": "An array where each element is one of the supported wrapper types.", "default": None}],
    }
    for f in stats["fields"]:
        if f["name"] == "minValue":
            f["type"].append(array_wrapper)
        elif f["name"] == "maxValue":
            f["type"].append("ArrayWrapper")
    stats["fields"].append({
        "name": "valueType",
        "type": ["null", {"type": "record", "name": "HoodieValueTypeInfo", "fields": [
            {"name": "typeOrdinal", "type": "int", "doc": "Enum type ordinal representing the value type"},
            {"name": "additionalInfo", "type": ["null", {"type": "string", "avro.java.string": "String"}],
             "doc": "Optional additional information about the value type", "default": None}]}],
        "doc": "Value type information containing enum ordinal and optional additional information",
        "default": None,
    })
    return json.dumps(schema, separators=(",", ":"))


SCHEMA_JSON_V9 = _schema_v9()
