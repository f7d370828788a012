"""Authoring: what a course maintainer runs to make release/ and notebooks/ from source/ and to check them."""
