"""Avro: schema conversion to and from Arrow, and the columnar datum decoder and encoder."""
