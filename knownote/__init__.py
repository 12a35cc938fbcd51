"""KnowNote: a local notebook whose answers cite the exact passages they came from."""
