"""The class in the room, drawn: the students' page (`student`), the teacher's panel on a lesson
page (`teacher`), and what both draw of a question (`question`). Over `attnviz.classroom`."""
