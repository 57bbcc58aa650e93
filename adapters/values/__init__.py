"""Reading typed values (numbers, amounts, dates) from the words a person said."""
