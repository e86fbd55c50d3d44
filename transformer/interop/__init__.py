"""Other engines' formats: OPUS-MT (Marian) import, CTranslate2 export."""
